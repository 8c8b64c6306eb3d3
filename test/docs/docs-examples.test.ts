// The documented request examples, run as written against the bundled example project (the tables
// `npm start` serves): the JSON and form calls of docs/tables-api.md in order, each answer compared
// with the `# ...` line under it where that line is plain JSON (no placeholders), and the stream URL
// of docs/realtime.md.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { adminToken, buildApp } from '../helper.js'
import { exampleConfigPath, exampleEnv } from '../fixtures/openapi/documents.js'

const docs = join(import.meta.dirname, '..', '..', 'docs')
const tablesApi = readFileSync(join(docs, 'tables-api.md'), 'utf8')
const realtime = readFileSync(join(docs, 'realtime.md'), 'utf8')

/** Words of a shell command line: single and double quotes (with `\"` inside double quotes), no expansion. */
function words (line: string): string[] {
  const out: string[] = []
  const pattern = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g
  for (const m of line.matchAll(pattern)) out.push(m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3])
  return out
}

interface Example { url: string, admin: boolean, body?: string, json: boolean, expected?: string }

/** The `curl` calls of the table API guide's sh blocks on `table` (continuations joined), with the `# ` line after each. */
function curlExamples (table: string): Example[] {
  const examples: Example[] = []
  for (const block of tablesApi.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1].replace(/\\\n\s*/g, ' ').split('\n')
    lines.forEach((line, i) => {
      if (!line.startsWith('curl ') || !line.includes(`/table/${table}/`) || line.includes(' -F ') || line.includes('<id>')) return
      const argv = words(line)
      const url = argv.find((w) => w.includes('$API'))!.replace('$API', '/api/v1')
      const body = argv[argv.indexOf('-d') + 1]
      const comment = lines[i + 1]?.startsWith('# ') === true ? lines[i + 1].slice(2).replace(/\s+\(.*\)$/, '') : undefined
      examples.push({ url, admin: argv.includes('$ADMIN'), body: argv.includes('-d') ? body : undefined, json: argv.includes('content-type: application/json'), expected: comment })
    })
  }
  return examples
}

t.test('Table API examples answer what docs/tables-api.md says', async (t) => {
  const app = await buildApp(t, exampleConfigPath, { env: exampleEnv })
  const examples = curlExamples('guestbook').filter((e) => e.body !== undefined)
  t.ok(examples.length >= 7, `${examples.length} examples with a body`)
  for (const example of examples) {
    const res = await app.inject({
      method: 'POST',
      url: example.url,
      headers: { ...(example.admin ? { authorization: `Bearer ${adminToken}` } : {}), 'content-type': example.json ? 'application/json' : 'application/x-www-form-urlencoded' },
      payload: example.body
    })
    const label = `${example.url} ${example.body!.slice(0, 70)}`
    t.ok(res.statusCode === 200 || example.expected?.startsWith('{"code"') === true, `${label}: ${res.statusCode} ${res.body.slice(0, 200)}`)
    let expected: unknown
    // Lines with placeholders (`"q3X..."`) show a shape, not an answer.
    try { expected = example.expected === undefined || example.expected.includes('...') ? undefined : JSON.parse(example.expected) } catch { expected = undefined }
    if (expected !== undefined) t.same(res.json(), expected, `${label} answers ${example.expected}`)
  }
})

t.test('the Realtime example subscribes to columns the example tables have', async (t) => {
  const app = await buildApp(t, exampleConfigPath, { env: exampleEnv })
  const url = /http:\/\/localhost:3000(\/api\/v1\/realtime\?[^"]+)/.exec(realtime)?.[1]
  t.ok(url, 'docs/realtime.md has a realtime URL')
  // inject waits for the end of a stream: open it on a real socket and read the first event only.
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.server.closeAllConnections())
  const sign = await app.inject({ method: 'POST', url: '/api/v1/table/users/auth/sign-up', payload: { username: 'rt', email: 'rt@example.com', password: 'correct horse battery', passwordConfirm: 'correct horse battery', name: 'RT' } })
  const controller = new AbortController()
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}${url!}`, { headers: { authorization: `Bearer ${sign.json().token}` }, signal: controller.signal })
  t.equal(res.status, 200, `the stream opens (${res.status})`)
  const reader = res.body!.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  t.match(first, /event: connect/, 'and says connect')
  const shown = /# data: (\{"clientId".*\})/.exec(realtime)?.[1]
  t.match(first, JSON.parse(shown!.replace('"hX1..."', '"x"')).subscriptions.map((s: unknown) => JSON.stringify(s)).join(','), 'with the subscriptions docs/realtime.md shows')
})
