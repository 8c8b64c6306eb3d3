// A scaffold's `npm start` command (scripts/start.mjs, as its package.json runs it) gives requests in
// flight 10 s on SIGTERM, as docs/deployment.md says, not fastify-cli's 500 ms: a request whose body
// never finishes holds the stop until the grace ends, and close-with-grace names the delay it waited.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { cleanEnv, fastbase, linkDependencies, listeningUrl, skip } from '../cli-run.js'
import { freshDir } from '../helper.js'

t.test('the scaffold\'s start gives in-flight requests 10 s', { skip }, async (t) => {
  const parent = freshDir(t, 'grace-')
  const dir = join(parent, 'my-app')
  t.equal((await fastbase(['init', 'my-app', '--fastbase', '^0.1.0'], { cwd: parent })).code, 0)
  linkDependencies(dir)
  const start: string = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.start
  t.notMatch(start, /GRACE/, 'the script sets nothing: start.mjs holds the default')
  // `exec`: the signal reaches node itself, as `docker run --init` or systemd deliver it.
  const server = spawn('sh', ['-c', `exec ${start}`], { cwd: dir, env: cleanEnv({ PORT: '0', FASTIFY_ADDRESS: '127.0.0.1', FASTBASE_LOG_REQUESTS: 'true' }), stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  let output = ''
  server.stdout.on('data', (d) => { output += d })
  server.stderr.on('data', (d) => { output += d })
  while (listeningUrl(output) === undefined && server.exitCode === null) await once(server.stdout, 'data')
  t.equal(server.exitCode, null, output)
  const port = Number(new URL(listeningUrl(output)!).port)

  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  socket.write('POST /api/v1/table/notes/insert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"values"')
  // The server has read the request (its body still to come) before the stop: its log says so.
  while (!output.includes('"url":"/api/v1/table/notes/insert"') && server.exitCode === null) await once(server.stdout, 'data')
  server.kill('SIGTERM')
  const [code] = await once(server, 'exit') as [number | null]
  t.equal(code, 1, 'ended by the grace, not by the request')
  t.match(output, /killed by timeout \(10000ms\)/, 'after waiting 10 s for it')
})

