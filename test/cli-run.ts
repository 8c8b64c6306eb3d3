// Runs the compiled `fastbase` command (dist/lib/cli/bin.js; `npm test` builds first) in a subprocess,
// for the CLI tests; and what the tests of a project outside the checkout share (a scaffold, the examples).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { createServer } from 'node:net'
import type { Test } from 'tap'

export const root = join(import.meta.dirname, '..')
export const bin = join(root, 'dist', 'lib', 'cli', 'bin.js')
export const skip = existsSync(bin) ? false : 'dist/ not built: run npm run build (npm test does)'

/** The environment of a user who set nothing fastbase reads. */
export function cleanEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['FASTBASE_CONFIG', 'FASTBASE_URL', 'FASTBASE_DATA_DIR', 'DATABASE_URL', 'ADMIN_SERVICE_TOKEN', 'JWT_SECRET', 'JWT_SECRET_USERS', 'NODE_ENV', 'PORT', 'FASTIFY_ADDRESS']) delete env[name]
  return { ...env, ...extra }
}

export interface Run { code: number | null, stdout: string, stderr: string }

export async function fastbase (args: string[], opts: { cwd?: string, env?: Record<string, string> } = {}): Promise<Run> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd ?? root, env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr }
}

/**
 * The address a server started with PORT=0 logs once it listens (Fastify's "Server listening at",
 * at log level info). Tests start servers that way, not on a port found free in advance: such a port,
 * closed again, can be taken by another test's server before this one binds it.
 */
export const listeningUrl = (output: string): string | undefined => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]

/** A port free now, for a server that cannot be told to choose its own (pgbouncer): one that fails to bind it says so and exits. */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  server.close()
  return port
}

/**
 * `npm install` of a project outside the checkout, offline: its node_modules links this checkout as
 * `fastbase` (what its `file:` dependency installs), its `fastbase` command, and the checkout's
 * copies of `packages`.
 */
export function linkDependencies (dir: string, packages: string[] = ['fastify-cli']): void {
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true })
  symlinkSync(root, join(dir, 'node_modules', 'fastbase'), 'dir')
  for (const name of packages) symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
  // The `fastbase` command npm links for `npm run` and `npx` (tsc does not make bin.js executable).
  writeFileSync(join(dir, 'node_modules', '.bin', 'fastbase'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`, { mode: 0o755 })
}

/** The checkout's tsc with `args` (a project's `-p dir`, or files and flags) in `cwd`: its output (the errors) and exit code. */
export async function tsc (args: string[], cwd = root): Promise<{ code: number | null, output: string }> {
  const child = spawn(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const [code] = await once(child, 'close') as [number | null]
  return { code, output }
}

export interface Server { url: string, output: () => string, stop: () => Promise<void> }

/**
 * Runs `command` in `dir` (its own process group, so a server under npm stops with it) on a port the
 * OS chooses (PORT=0, FASTIFY_ADDRESS) until it logs where it listens (listeningUrl) and
 * `<url>/api/v1/health` answers 200, or 60 s pass; stopped after the test.
 */
export async function startServer (t: Test, dir: string, command: string[], env: Record<string, string> = {}): Promise<Server> {
  const server = spawn(command[0], command.slice(1), { cwd: dir, env: cleanEnv({ PORT: '0', FASTIFY_ADDRESS: '127.0.0.1', ...env }), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  server.stdout.on('data', (d) => { output += d })
  server.stderr.on('data', (d) => { output += d })
  const kill = (): void => { try { process.kill(-server.pid!, 'SIGTERM') } catch {} }
  t.teardown(kill)
  let url = ''
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && server.exitCode === null;) {
    url ||= listeningUrl(output) ?? ''
    if (url !== '' && (await fetch(`${url}/api/v1/health`).catch(() => undefined))?.ok === true) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  if (url === '') throw new Error(`the server never said where it listens:\n${output}`)
  return {
    url,
    output: () => output,
    stop: async () => {
      if (server.exitCode !== null) return
      const exited = once(server, 'exit')
      kill()
      await exited
    }
  }
}
