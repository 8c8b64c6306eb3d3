// Runs the compiled `fastbase` command (dist/lib/cli/bin.js; `npm test` builds first) in a subprocess,
// for the CLI tests.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { createServer } from 'node:net'

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

export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  server.close()
  return port
}
