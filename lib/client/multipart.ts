// Writes with files: a value that is a File or Blob, bytes (Uint8Array, so a Node Buffer), a stream
// (a web ReadableStream or an async iterable such as a Node Readable) or `{ data, name, type }` is sent
// as an `@filePayload` part, the JSON body as `@jsonPayload` with `"@filePayload.<n>"` in its place
// (docs/files.md). Blobs and bytes go as FormData (replayable, and XHR can report its progress);
// a stream is encoded here as one multipart stream, sent once.

export type FileData = Blob | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>
/** A file value: the data alone, or with the name and type it is stored under. */
export type FileInput = FileData | { data: FileData, name?: string, type?: string }

interface Part { data: FileData, name: string, type: string }

function isData (value: unknown): value is FileData {
  if (typeof value !== 'object' || value === null) return false
  return (typeof Blob !== 'undefined' && value instanceof Blob) || value instanceof Uint8Array ||
    (typeof ReadableStream !== 'undefined' && value instanceof ReadableStream) || Symbol.asyncIterator in value
}

function partOf (value: unknown, field: string): Part | undefined {
  if (isData(value)) {
    const name = typeof File !== 'undefined' && value instanceof File ? value.name : field
    return { data: value, name, type: typeof Blob !== 'undefined' && value instanceof Blob && value.type !== '' ? value.type : 'application/octet-stream' }
  }
  if (typeof value === 'object' && value !== null && 'data' in value && isData(value.data)) {
    const named = partOf(value.data, field)
    return {
      data: value.data,
      name: 'name' in value && typeof value.name === 'string' ? value.name : named?.name ?? field,
      type: 'type' in value && typeof value.type === 'string' ? value.type : named?.type ?? 'application/octet-stream'
    }
  }
  return undefined
}

/** The files among `fields`' values, each replaced by its `@filePayload.<n>` reference. */
export function extractFiles (fields: Record<string, unknown>): { fields: Record<string, unknown>, parts: Part[] } {
  const parts: Part[] = []
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) {
    const part = partOf(value, key)
    if (part === undefined) out[key] = value
    else out[key] = `@filePayload.${parts.push(part) - 1}`
  }
  return { fields: out, parts }
}

const streaming = (data: FileData): boolean => !(data instanceof Uint8Array) && !(typeof Blob !== 'undefined' && data instanceof Blob)

/** The multipart body of `json` and `parts`: FormData, or a stream when a part is a stream. */
export function multipartBody (json: unknown, parts: Part[]): { body: FormData } | { body: ReadableStream<Uint8Array>, contentType: string } {
  if (parts.some((p) => streaming(p.data))) return streamedBody(json, parts)
  const form = new FormData()
  form.append('@jsonPayload', JSON.stringify(json))
  for (const part of parts) {
    const blob = part.data instanceof Uint8Array ? new Blob([new Uint8Array(part.data)], { type: part.type }) : part.data
    if (blob instanceof Blob) form.append('@filePayload', blob, part.name)
  }
  return { body: form }
}

async function * chunksOf (data: FileData): AsyncGenerator<Uint8Array> {
  if (data instanceof Uint8Array) yield data
  else if (typeof Blob !== 'undefined' && data instanceof Blob) yield new Uint8Array(await data.arrayBuffer())
  else if (Symbol.asyncIterator in data) yield * data
  else if (data instanceof ReadableStream) {
    const reader = data.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value
  }
}

function streamedBody (json: unknown, parts: Part[]): { body: ReadableStream<Uint8Array>, contentType: string } {
  const boundary = `----fastbase${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`
  const text = new TextEncoder()
  // A name or type cannot break out of its header: quotes and line breaks are dropped.
  const clean = (s: string): string => s.replace(/["\r\n\\]/g, '')
  async function * body (): AsyncGenerator<Uint8Array> {
    yield text.encode(`--${boundary}\r\ncontent-disposition: form-data; name="@jsonPayload"\r\n\r\n${JSON.stringify(json)}\r\n`)
    for (const part of parts) {
      yield text.encode(`--${boundary}\r\ncontent-disposition: form-data; name="@filePayload"; filename="${clean(part.name)}"\r\ncontent-type: ${clean(part.type)}\r\n\r\n`)
      yield * chunksOf(part.data)
      yield text.encode('\r\n')
    }
    yield text.encode(`--${boundary}--\r\n`)
  }
  const iterator = body()
  const stream = new ReadableStream<Uint8Array>({
    async pull (controller) {
      const next = await iterator.next()
      if (next.done === true) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel () { await iterator.return(undefined) }
  })
  return { body: stream, contentType: `multipart/form-data; boundary=${boundary}` }
}
