// PostgreSQL's own pg_dump and pg_restore, run as child processes. The connection goes in the
// environment (PGHOST, PGPASSWORD...), never on the command line, where any user of the machine
// could read the password.
import { spawn } from 'node:child_process'
import { errors } from '../errors.js'

/** libpq's environment for a postgres:// URL (fastbase's own `schema` parameter left out). */
export function pgEnvironment (databaseUrl: string): NodeJS.ProcessEnv {
  const url = new URL(databaseUrl)
  const env: NodeJS.ProcessEnv = { ...process.env }
  const set = (name: string, value: string | null | undefined): void => { if (value !== undefined && value !== null && value !== '') env[name] = value }
  set('PGHOST', decodeURIComponent(url.hostname).replace(/^\[|\]$/g, ''))
  set('PGPORT', url.port)
  set('PGUSER', decodeURIComponent(url.username))
  set('PGPASSWORD', decodeURIComponent(url.password))
  set('PGDATABASE', decodeURIComponent(url.pathname.replace(/^\//, '')))
  for (const [param, name] of [['sslmode', 'PGSSLMODE'], ['sslrootcert', 'PGSSLROOTCERT'], ['sslcert', 'PGSSLCERT'], ['sslkey', 'PGSSLKEY'], ['application_name', 'PGAPPNAME']] as const) set(name, url.searchParams.get(param))
  return env
}

/** Runs `tool` to the end; rejects with its last lines of stderr, or FB_ERR_BACKUP_TOOL_MISSING when it is not installed. */
export async function runPgTool (tool: 'pg_dump' | 'pg_restore', args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000) })
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? errors.backupToolMissing(tool) : err))
    child.once('close', (code, signal) => {
      if (code === 0) resolve()
      else reject(new Error(`${tool} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-5).join(' | ') || 'no message'}`))
    })
  })
}
