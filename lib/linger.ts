// Lingering close (decision D91). An answer sent before its request's body has arrived (a refused
// upload, a bad token, a body too large, an unknown path) leaves the rest of the body in flight. A
// connection closed now resets (a socket closed with unread data sends RST), and a client still
// sending then fails with a reset and, often, without ever reading the answer that had arrived. And
// a body nobody reads any more stalls the connection (the server stops reading, the client waits).
// So, as nginx does: the answer says `Connection: close`, the server half-closes after it (the
// client sees the answer end), reads and discards the rest of the body, and closes when the body
// has arrived or a bound is reached (bytes read, time since the answer), whichever comes first.
import type { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'

export interface LingerBounds {
  /** Body bytes read and discarded at most (from when the answer is sent). */
  bytes: number
  /** Milliseconds the connection stays open once the answer is written. */
  time: number
}

/** Whether the request's headers announce a body and the server has not received all of it yet. */
export function bodyInFlight (request: IncomingMessage): boolean {
  if (request.complete) return false
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers
  return encoding !== undefined || Number(length) > 0
}

/** The connections lingering after an early answer, so that a server shutting down can close them. */
export class LingeringConnections {
  readonly #sockets = new Set<Socket>()
  #closed = false

  constructor (private readonly bounds: LingerBounds) {}

  /**
   * Takes over the rest of the body of a request answered before its body arrived, and returns
   * true: the answer must then say `Connection: close`. Call it before the answer is written.
   * HTTP/1 only (HTTP/2 ends one stream, not the connection); not while the server shuts down.
   */
  takeOver (request: IncomingMessage): boolean {
    if (this.#closed || request.httpVersionMajor !== 1 || !bodyInFlight(request)) return false
    // Not a network socket (an injected request): there is nothing to linger on.
    const socket: unknown = request.socket
    if (!(socket instanceof Socket) || socket.destroyed) return false
    this.#linger(socket, request)
    return true
  }

  /** Closes every lingering connection at once (the server is shutting down). */
  closeAll (): void {
    this.#closed = true
    for (const socket of this.#sockets) socket.destroy()
  }

  #linger (socket: Socket, request: IncomingMessage): void {
    const { bytes, time } = this.bounds
    let discarded = 0
    let answered = false
    let timer: NodeJS.Timeout | undefined
    this.#sockets.add(socket)
    socket.once('close', () => {
      clearTimeout(timer)
      this.#sockets.delete(socket)
    })
    // Ends the connection the way Node would have: once the answer is written, no reset (nothing unread).
    const close = (): void => { Socket.prototype.destroySoon.call(socket) }
    // A bound is reached: close now, whatever is still arriving.
    const cut = (): void => { socket.destroy() }
    // Node's HTTP server calls destroySoon on the socket once the last answer of a connection (one
    // that says `Connection: close`) is written; here that starts the lingering instead.
    socket.destroySoon = () => {
      answered = true
      if (request.complete) return close()
      if (discarded > bytes) return cut()
      socket.end()
      timer = setTimeout(cut, time)
      timer.unref()
    }
    // Whoever read the body (a multipart parser, a body parser that gave up) is done with it.
    request.unpipe()
    request.removeAllListeners('data')
    request.on('data', (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded <= bytes) return
      // Past the bound before the answer is written: stop reading; the answer goes out first.
      if (answered) cut()
      else request.pause()
    })
    request.once('end', () => { if (answered) close() })
    request.resume()
  }
}
