// fastbase/client in chromium (Debian's, playwright-core), from a page on another origin listed in
// `cors.origins` (decision D97), on both dialects: the scenarios of test/lib/client/client.test.ts run unchanged
// in the page (test/fixtures/client/steps.js), plus what only a browser has: upload progress (XHR),
// localStorage, and cookie mode with the cookie the server sets (a one-tap sign-in).
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join, normalize } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { launch } from '../../fixtures/panel/browser.js'
import { forEachDialect } from '../../helper.js'
import { root, skip } from '../../cli-run.js'
import { liveServer, type LiveServer } from '../../fixtures/client/server.js'
import { authScenario, realtimeScenario, secondFactorScenario, tableScenario, type Harness } from '../../fixtures/client/scenario.js'

const PAGE = `<!doctype html><meta charset="utf-8"><title>client</title><script type="module">
import { createClient } from '/client/index.js'
import { newState, run } from '/steps.js'
const state = newState(createClient)
window.run = (step, args) => run(state, step, args)
</script>`

/** A static front end on 127.0.0.1 (reached as localhost): the page, the built client, the steps. */
async function frontEnd (t: Test): Promise<number> {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    const file = path === '/steps.js' ? join(root, 'test', 'fixtures', 'client', 'steps.js')
      : path.startsWith('/client/') ? normalize(join(root, 'dist', 'lib', 'client', path.slice('/client/'.length))) : undefined
    if (file === undefined || !file.startsWith(root)) return res.writeHead(404).end()
    try {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(await readFile(file))
    } catch {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return (server.address() as AddressInfo).port
}

/** Uncaught errors of each page (asserted empty at the end of its test). */
const pageErrors = new WeakMap<Page, string[]>()

async function open (t: Test, browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  const errors: string[] = []
  pageErrors.set(page, errors)
  page.on('pageerror', (error) => { errors.push(error.message) })
  await page.goto(url)
  await page.waitForFunction(() => typeof (window as any).run === 'function')
  return page
}

const harness = (page: Page, base: string): Harness => ({
  where: 'browser',
  base,
  run: async (step, ...args) => await page.evaluate(([s, a]) => (window as any).run(s, a), [step, args] as const)
})

async function setUp (t: Test, browser: Browser, dialect: 'sqlite' | 'postgres'): Promise<{ server: LiveServer, page: Page, h: Harness }> {
  const port = await frontEnd(t)
  const server = await liveServer(t, dialect, [`http://localhost:${port}`])
  const page = await open(t, browser, `http://localhost:${port}/`)
  return { server, page, h: harness(page, server.origin('localhost')) }
}

const browser = await launch(t)
if (browser !== undefined) {
  for (const [name, scenario] of [['auth', authScenario], ['tables and files', tableScenario], ['realtime', realtimeScenario], ['email codes and second factor', secondFactorScenario]] as const) {
    await t.test(name, { skip }, async (t) => {
      await forEachDialect(t, `client in chromium, another origin: ${name}`, async (t, dialect) => {
        const { server, page, h } = await setUp(t, browser, dialect)
        await scenario(t, server, h)
        t.same(pageErrors.get(page), [], 'no uncaught error in the page')
        if (name === 'tables and files') {
          const stored = await page.evaluate(() => Object.keys(localStorage))
          t.same(stored, [`fastbase-session:${h.base}/api/v1`], 'the default store in a browser: localStorage, keyed by the API')
        }
      })
    })
  }

  await t.test('cookie mode', { skip }, async (t) => {
    await forEachDialect(t, 'client in chromium: cookie mode, the cookie set by the server', async (t, dialect) => {
      const { server, page, h } = await setUp(t, browser, dialect)
      const { run, base } = h
      const cookies = async () => (await page.context().cookies()).filter((c) => c.name === 'client_auth')
      await run('create', 'kim', base, { session: 'cookie' })
      const kim = await run('auth', 'kim', 'oneTap', await server.idToken('kim-sub', 'kim@example.com'), { provider: 'acme' })
      t.equal(kim.email, 'kim@example.com', 'one-tap signs in')
      t.equal((await cookies()).length, 1, 'the server set the auth cookie (HttpOnly: the page never reads it)')
      t.ok((await cookies())[0]?.httpOnly)
      t.same(await page.evaluate(() => Object.keys(localStorage)), [], 'cookie mode keeps nothing in localStorage')
      await run('table', 'kim', 'notes', 'insert', { values: { owner: kim.id, body: 'kim private' } })

      // A new client, as after a reload: no token in the script; the cookie signs every call in.
      await run('create', 'kim2', base, { session: 'cookie' })
      t.same(await run('authState', 'kim2'), { user: null, token: null, changes: [] }, 'the script holds no token')
      t.same((await run('table', 'kim2', 'notes', 'list', { select: 'body' })).items, [{ body: 'kim private' }], 'the cookie authenticates the list')
      await run('subscribe', 'kim2', 'kim2-notes', 'notes', {})
      for (let i = 0; i < 200 && !(await run('events', 'kim2-notes')).some((e: any) => e.type === 'open'); i++) await new Promise((resolve) => setTimeout(resolve, 50))
      await run('table', 'kim', 'notes', 'insert', { values: { owner: kim.id, body: 'kim second' } })
      let events: any[] = []
      for (let i = 0; i < 200 && !events.some((e) => e.type === 'change'); i++) {
        events = await run('events', 'kim2-notes')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      t.match(events.find((e) => e.type === 'change'), { action: 'insert', record: { body: 'kim second' } }, 'the stream is signed in by the cookie')

      t.equal(await run('auth', 'kim2', 'logout'), null, 'logout with the cookie only')
      t.same(await cookies(), [], 'the server cleared the cookie')
      t.same((await run('table', 'kim2', 'notes', 'list', {})).items, [], 'signed out: the private rows are gone')
      for (let i = 0; i < 200 && !events.some((e) => e.type === 'end'); i++) {
        events = await run('events', 'kim2-notes')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      t.match(events.at(-1), { type: 'end', reason: 'signed-out' }, 'the revoked session ended the cookie stream')
      t.match((await run('table', 'kim', 'notes', 'list', {})).error, { status: 401 }, 'the session of the one-tap is over for its token too')
      t.same(pageErrors.get(page), [], 'no uncaught error in the page')
    })
  })

  await t.test('a page on an origin not listed', { skip }, async (t) => {
    const port = await frontEnd(t)
    const server = await liveServer(t, 'sqlite', [])
    const page = await open(t, browser, `http://localhost:${port}/`)
    const { run } = harness(page, server.origin('localhost'))
    await run('create', 'x', server.origin('localhost'), {})
    t.match((await run('table', 'x', 'notes', 'list', {})).error, { name: 'FastbaseError', status: 0, code: 'FB_ERR_NETWORK' }, 'CORS refuses it: a network error')
    t.same(pageErrors.get(page), [], 'no uncaught error in the page')
  })
}
