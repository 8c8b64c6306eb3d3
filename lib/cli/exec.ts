// `fastbase exec <METHOD> <route> [json-body]`: one call to a running server's API with the admin
// service token (teenybase's `teeny exec`), the JSON answer on stdout.
import { EXIT, atMost, err, out, parse, UsageError, type Command } from './io.js'
import { commandEnv } from './check.js'
import { errorMessage } from '../thrown.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
const DEFAULT_URL = 'http://127.0.0.1:3000'
const DEFAULT_TIMEOUT_MS = 30_000

export const exec: Command = {
  summary: 'call the API of a running server with the service token',
  help: `Usage: fastbase exec <METHOD> <route> [json-body] [--url <base>] [--timeout <ms>] [--env-file <file>]

Calls the API of a running fastbase server as superadmin (Authorization: Bearer
$ADMIN_SERVICE_TOKEN) and prints the JSON answer.

  METHOD           ${METHODS.join(', ')}
  route            a path under /api/v1 (table/posts/list, /table/posts/select?limit=2,
                   action/publish), or a full path starting with /api/
  json-body        the JSON request body (not with GET)
  --url <base>     the server. Default: FASTBASE_URL, then ${DEFAULT_URL}
  --timeout <ms>   give up after this long. Default ${DEFAULT_TIMEOUT_MS}
  --env-file <file>  the .env file to read. Default: .env in the current folder, when there is
                   one (variables already set in the environment win), as the server reads it

Environment (or .env): ADMIN_SERVICE_TOKEN (required), FASTBASE_URL.
Exit codes: 0 a 2xx answer, 1 any other answer or no answer, 2 usage error.

Example: fastbase exec POST table/posts/insert '{"values":{"title":"Hi"},"returning":"*"}'`,
  run: async (args) => {
    const { values, positionals } = parse(args, { url: { type: 'string' }, timeout: { type: 'string' }, 'env-file': { type: 'string' } })
    atMost(positionals, 3)
    const [methodArg, route, bodyText] = positionals
    if (methodArg === undefined || route === undefined) throw new UsageError('needs a METHOD and a route')
    const method = methodArg.toUpperCase()
    if (!METHODS.some((m) => m === method)) throw new UsageError(`unknown method "${methodArg}" (use ${METHODS.join(', ')})`)
    let body: string | undefined
    if (bodyText !== undefined) {
      if (method === 'GET') throw new UsageError('a GET request takes no body')
      try {
        body = JSON.stringify(JSON.parse(bodyText))
      } catch (error) {
        throw new UsageError(`the body is not valid JSON: ${errorMessage(error)}`)
      }
    }
    const timeout = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : Number(values.timeout)
    if (!Number.isInteger(timeout) || timeout <= 0) throw new UsageError('--timeout must be a positive number of milliseconds')
    // The token the server in this folder reads: from the environment, else its .env.
    const { env } = await commandEnv(values['env-file'])
    const base = (typeof values.url === 'string' ? values.url : undefined) ?? nonEmpty(env.FASTBASE_URL) ?? DEFAULT_URL
    const url = targetUrl(base, route)
    const token = nonEmpty(env.ADMIN_SERVICE_TOKEN)
    if (token === undefined) throw new UsageError('ADMIN_SERVICE_TOKEN is not set (the server\'s service token)')

    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    let response: Response
    try {
      response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(timeout) })
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeout} ms` : describeFetchError(error)
      err(`fastbase exec: ${method} ${url}: ${reason}`)
      return EXIT.failed
    }
    const text = await response.text()
    out(prettyJson(text))
    if (!response.ok) {
      err(`fastbase exec: ${method} ${url}: HTTP ${response.status}`)
      return EXIT.failed
    }
    return EXIT.ok
  }
}

/** `route` under `<base>/api/v1/` unless it already starts with `/api/`. */
function targetUrl (base: string, route: string): URL {
  let parsed: URL
  try {
    parsed = new URL(base)
  } catch {
    throw new UsageError(`--url / FASTBASE_URL is not a URL: ${base}`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url / FASTBASE_URL must be http or https: ${base}`)
  if (/^[a-z][a-z0-9+.-]*:/i.test(route)) throw new UsageError('the route is a path (table/posts/list), not a URL: use --url for the server')
  const path = route.startsWith('/api/') ? route : `/api/v1/${route.replace(/^\/+/, '')}`
  return new URL(path, parsed)
}

/** The answer as indented JSON, or as sent when it is not JSON. */
function prettyJson (text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

function describeFetchError (error: unknown): string {
  const cause = (error as { cause?: { code?: string, message?: string } }).cause
  if (cause?.code === 'ECONNREFUSED') return 'connection refused (is the server running? --url / FASTBASE_URL set the address)'
  return cause?.message ?? errorMessage(error)
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
