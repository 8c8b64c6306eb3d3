// Server-sent events read from a fetch body (docs/realtime.md): fetch can send the Authorization
// header, which EventSource cannot. Calls `onEvent` per event; comments (heartbeats) only count as life.

export interface SseEvent { event: string, data: string }

/**
 * Reads `body` until it ends or `signal` aborts; `onBytes` on every chunk (the heartbeat watchdog).
 * Blank-line separated blocks of `event:` / `data:` lines; a block without data is a comment.
 */
export async function readEvents (body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => void, onBytes: () => void): Promise<void> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      onBytes()
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n')
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        let event = 'message'
        const data: string[] = []
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':')
          if (colon === 0) continue
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
          if (field === 'event') event = value
          else if (field === 'data') data.push(value)
        }
        if (data.length > 0) onEvent({ event, data: data.join('\n') })
      }
    }
  } finally {
    reader.releaseLock()
  }
}
