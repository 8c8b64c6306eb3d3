// A TCP port free on loopback now, for a server the bench starts as its own process (`PORT=`).
import { createServer } from 'node:net'
import { once } from 'node:events'

export async function freePort () {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  return port
}
