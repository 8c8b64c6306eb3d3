// `npm start` runs Node with `--no-opt` and scripts/start.mjs turns V8's optimizing compiler on once
// the server listens (decision D137): off while the server starts, on for every request after; and
// the young generation the start grew is given back once the server is quiet (decision D144). A
// scaffold's start command is run as a user runs it, with a probe preloaded that asks V8 directly.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cleanEnv, fastbase, linkDependencies, listeningUrl, root, skip } from '../cli-run.js'
import { freshDir } from '../helper.js'
import { QUIET_SECONDS } from '../../lib/cli/young-generation.js'

const probe = pathToFileURL(join(import.meta.dirname, '..', 'fixtures', 'optimizer-probe.mjs')).href
const startOf = (dir: string): string => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.start
/** The flags a start command gives Node itself (those before the script). */
const nodeFlags = (start: string): string[] => (/^node ((?:--\S+ )*)/.exec(start)?.[1] ?? '').trim().split(' ')

t.test('the optimizer is off while npm start starts the server and on once it listens; the young generation is given back when it is quiet', { skip }, async (t) => {
  const parent = freshDir(t, 'optimizer-')
  const dir = join(parent, 'my-app')
  t.equal((await fastbase(['init', 'my-app', '--fastbase', '^0.1.0'], { cwd: parent })).code, 0)
  linkDependencies(dir)
  const start = startOf(dir)
  t.ok(nodeFlags(start).includes('--no-opt'), start)
  t.same(nodeFlags(start), nodeFlags(startOf(root)), 'the scaffold\'s start gives Node the flags fastbase\'s own npm start does')

  const probed = start.replace(/^node /, `node --allow-natives-syntax --import=${probe} `)
  t.not(probed, start)
  const server = spawn('sh', ['-c', `exec ${probed}`], { cwd: dir, env: cleanEnv({ PORT: '0', FASTIFY_ADDRESS: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  let output = ''
  server.stdout.on('data', (d) => { output += d })
  server.stderr.on('data', (d) => { output += d })
  while (listeningUrl(output) === undefined && server.exitCode === null) await Promise.race([once(server.stdout, 'data'), once(server, 'exit')])
  t.equal(server.exitCode, null, output)
  t.match(output, /optimizer at start: false/, 'off while the server starts')
  t.notMatch(output, /optimizer now/)

  // The young generation the start grew is given back once the server has been quiet (decision D144):
  // the probe prints its size every second.
  const youngAt = (): number[] => [...output.matchAll(/young generation: (\d+) bytes/g)].map((m) => Number(m[1]))
  const listening = youngAt().length
  while (youngAt().length === listening && server.exitCode === null) await Promise.race([once(server.stderr, 'data'), once(server, 'exit')])
  const since = (): number[] => youngAt().slice(listening)
  const first = since()[0]
  const deadline = Date.now() + (QUIET_SECONDS + 10) * 1000
  while (Date.now() < deadline && Math.min(...since()) >= first && server.exitCode === null) await Promise.race([once(server.stderr, 'data'), once(server, 'exit')])
  t.ok(Math.min(...since()) < first, `the young generation, ${first} bytes once it listens, shrinks while it is quiet: ${since().join(', ')}`)

  const health = await fetch(`${listeningUrl(output)}/api/v1/health`)
  t.equal(health.status, 200)
  server.kill('SIGUSR2')
  while (!output.includes('optimizer now:') && server.exitCode === null) await Promise.race([once(server.stderr, 'data'), once(server, 'exit')])
  t.match(output, /optimizer now: true/, 'on once it listens')
})
