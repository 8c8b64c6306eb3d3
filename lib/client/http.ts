// One HTTP call to the API: fetch, or XMLHttpRequest for an upload whose progress is asked for (fetch
// reports none). Answers are parsed JSON; a refusal is a FastbaseError.
import { FastbaseError, errorOf } from './error.js'

export interface Progress { loaded: number, total: number }

export interface Call {
  method: 'GET' | 'POST' | 'DELETE'
  url: string
  headers: Record<string, string>
  body?: string | FormData | ReadableStream<Uint8Array>
  /** 'include' in cookie mode, so the browser sends the auth cookie (also to another origin). */
  credentials: RequestCredentials
  onProgress?: (progress: Progress) => void
}

export interface Answer { status: number, code: string | null, body: Json, headers: { get: (name: string) => string | null } }

export type Fetch = typeof globalThis.fetch
/** An answer's JSON (JSON.parse's own type): the shapes come from the project's generated types. */
export type Json = ReturnType<typeof JSON.parse>

function parse (text: string): Json {
  try {
    return text === '' ? undefined : JSON.parse(text)
  } catch {
    return text
  }
}

const CODE_HEADER = 'fastbase-error-code'

/** Sends `call`; a network failure is a FastbaseError of status 0. */
export async function send (fetchFn: Fetch, call: Call): Promise<Answer> {
  if (call.onProgress !== undefined && call.body instanceof FormData && typeof XMLHttpRequest !== 'undefined') return await sendXhr(call)
  // A stream body needs `duplex: 'half'` (Node's fetch requires it; browsers that stream uploads too).
  const init: RequestInit & { duplex?: 'half' } = { method: call.method, headers: call.headers, body: call.body, credentials: call.credentials, cache: 'no-store' }
  if (call.body instanceof ReadableStream) init.duplex = 'half'
  let response: Response
  try {
    response = await fetchFn(call.url, init)
  } catch (error) {
    throw new FastbaseError(0, 'FB_ERR_NETWORK', `The server did not answer (${error instanceof Error ? error.message : String(error)})`)
  }
  return { status: response.status, code: response.headers.get(CODE_HEADER), body: parse(await response.text()), headers: response.headers }
}

function sendXhr (call: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(call.method, call.url)
    xhr.withCredentials = call.credentials === 'include'
    for (const [name, value] of Object.entries(call.headers)) xhr.setRequestHeader(name, value)
    const progress = call.onProgress
    if (progress !== undefined) xhr.upload.onprogress = (e) => { progress({ loaded: e.loaded, total: e.lengthComputable ? e.total : 0 }) }
    xhr.onload = () => resolve({ status: xhr.status, code: xhr.getResponseHeader(CODE_HEADER), body: parse(xhr.responseText), headers: { get: (name) => xhr.getResponseHeader(name) } })
    xhr.onerror = () => reject(new FastbaseError(0, 'FB_ERR_NETWORK', 'The server did not answer'))
    xhr.send(call.body instanceof FormData ? call.body : null)
  })
}

/** The answer's body, or its FastbaseError. */
export function bodyOf (answer: Answer): Json {
  if (answer.status >= 200 && answer.status < 300) return answer.body
  throw errorOf(answer.status, answer.code, answer.body)
}

/** `base + path` with the query's defined values (arrays and objects as JSON, as the API reads them). */
export function urlOf (base: string, path: string, query: Record<string, unknown> = {}): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    params.append(key, Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  const search = params.toString()
  return `${base}${path}${search === '' ? '' : `?${search}`}`
}
