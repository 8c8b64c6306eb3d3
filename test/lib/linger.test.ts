// lib/linger.ts without a server: which requests still have a body in flight, and which are left
// alone. What a lingering connection does on the wire is tested over real sockets in
// test/plugins/upload-refusal.test.ts and test/plugins/upload-refusal-browser.test.ts.
import t from 'tap'
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { Duplex } from 'node:stream'
import { bodyInFlight, LingeringConnections } from '../../lib/linger.js'

function request (headers: Record<string, string>, options: { complete?: boolean, socket?: Socket, httpVersionMajor?: number } = {}): IncomingMessage {
  const message = new IncomingMessage(options.socket ?? new Socket())
  message.headers = headers
  message.complete = options.complete ?? false
  message.httpVersionMajor = options.httpVersionMajor ?? 1
  return message
}

t.test('a body is in flight when the headers announce one and it has not all arrived', async (t) => {
  t.equal(bodyInFlight(request({ 'content-length': '10' })), true, 'Content-Length')
  t.equal(bodyInFlight(request({ 'transfer-encoding': 'chunked' })), true, 'chunked')
  t.equal(bodyInFlight(request({ 'content-length': '10' }, { complete: true })), false, 'all of it arrived')
  t.equal(bodyInFlight(request({ 'content-length': '0' })), false, 'an empty body')
  t.equal(bodyInFlight(request({})), false, 'no body (a GET)')
  t.equal(bodyInFlight(request({ 'content-length': 'x' })), false, 'a length that is not a number (Node refuses it before)')
})

t.test('what is not taken over', async (t) => {
  const lingering = new LingeringConnections({ bytes: 10, time: 10 })
  t.equal(lingering.takeOver(request({ 'content-length': '10' }, { complete: true })), false, 'a request whose body arrived')
  t.equal(lingering.takeOver(request({ 'content-length': '10' }, { httpVersionMajor: 2 })), false, 'HTTP/2: an early answer ends one stream')
  // An injected request (light-my-request) has a socket that is not a network socket.
  const injected = new IncomingMessage(new Duplex() as unknown as Socket)
  injected.headers = { 'content-length': '10' }
  t.equal(lingering.takeOver(injected), false, 'not a network socket')
  const destroyed = new Socket()
  destroyed.destroy()
  t.equal(lingering.takeOver(request({ 'content-length': '10' }, { socket: destroyed })), false, 'a connection already closed')
  const socket = new Socket()
  t.equal(lingering.takeOver(request({ 'content-length': '10' }, { socket })), true, 'while a body in flight on a network socket is')
  lingering.closeAll()
  t.equal(socket.destroyed, true, 'which a shutdown closes')
  t.equal(lingering.takeOver(request({ 'content-length': '10' })), false, 'once the server shuts down')
})
