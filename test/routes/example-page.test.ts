// The bundled example's page (examples/bundled/public/, routes/example-page.ts) in chromium (Debian's, through
// playwright-core) against the server `npm start` runs, on both dialects: a visitor signs up, writes a
// post and sees it listed, and a post another client writes appears without a reload; a draft of
// someone else's never does. A project with its own config serves no page at `/`.
import t from 'tap'
import type { ConsoleMessage } from 'playwright-core'
import { launch } from '../fixtures/panel/browser.js'
import { buildApp, forEachDialect, freshDir, sharedDatabase } from '../helper.js'
import { root, skip, startServer } from '../cli-run.js'
import { EXAMPLE_PAGE_CSP } from '../../routes/example-page.js'

const password = 'a long password 1'

t.test('a project of its own gets no example page', async (t) => {
  const app = await buildApp(t, { jwtSecret: 's', appUrl: 'http://localhost', tables: [] })
  for (const url of ['/', '/app.js', '/client/index.js']) t.equal((await app.inject({ url })).statusCode, 404, `${url}: 404`)
})

const browser = await launch(t)
if (browser !== undefined) {
  await t.test('the example page', { skip }, async (t) => {
    await forEachDialect(t, 'npm start serves the example page at /', async (t, dialect) => {
      const database: Record<string, string> = dialect === 'postgres' ? { DATABASE_URL: sharedDatabase(t, 'postgres') } : {}
      const server = await startServer(t, root, ['npm', 'start'], { FASTBASE_DATA_DIR: freshDir(t, 'example-page-'), ...database })
      const { url } = server
      t.match((await (await fetch(`${url}/api/v1/health`)).json()), { status: 'ok', dialect }, `the bundled example on ${dialect}`)
      const index = await fetch(`${url}/`)
      t.equal(index.headers.get('content-security-policy'), EXAMPLE_PAGE_CSP, 'the page\'s strict CSP')
      t.equal((await fetch(`${url}/client/index.js`)).status, 200, 'the built client, next to the page')
      t.equal((await fetch(`${url}/client/index.d.ts`)).status, 404, 'its declarations are not served')
      t.same(await (await fetch(`${url}/nope`)).json(), { code: 404, message: 'Route not found - GET /nope', data: {} }, 'other paths keep fastbase\'s 404')

      const context = await browser.newContext()
      t.teardown(() => context.close())
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (error) => { problems.push(error.message) })
      // A script or request the CSP refused would show here.
      page.on('console', (message: ConsoleMessage) => { if (message.type() === 'error') problems.push(message.text()) })
      await page.goto(`${url}/`)
      await page.locator('#live', { hasText: /^live$/ }).waitFor()
      t.same(problems, [], 'the page loaded and subscribed with no error, nothing refused by the CSP')

      await page.fill('#login [name=identity]', 'nobody')
      await page.fill('#login [name=password]', 'wrong password')
      await page.click('#login button')
      await page.locator('#message', { hasText: /\S/ }).waitFor()
      t.ok(await page.isVisible('#signed-out'), 'a wrong login: still signed out, the error shown')
      // The refused login's 400 is logged by the browser as a failed request; nothing else may be.
      t.same(problems.splice(0).filter((p) => !/status of 400/.test(p)), [], 'only the refused request was logged')

      await page.fill('#signup [name=username]', 'visitor')
      await page.fill('#signup [name=email]', 'visitor@example.com')
      await page.fill('#signup [name=password]', password)
      await page.click('#signup button')
      await page.locator('#user', { hasText: 'visitor' }).waitFor()
      t.ok(await page.isHidden('#signed-out'), 'signed up and in')

      await page.fill('#new-post [name=title]', 'Hello from the page')
      await page.fill('#new-post [name=body]', 'written in chromium <b>not bold</b>')
      await page.click('#new-post button')
      await page.locator('#posts li', { hasText: 'Hello from the page' }).waitFor()
      t.equal(await page.locator('#posts li p').first().textContent(), 'written in chromium <b>not bold</b>', 'listed, its text shown as text')

      // Another client (Node, the same built module) signs up and writes: a draft, then a published post.
      const { createClient } = await import('../../dist/lib/client/index.js')
      const other = createClient(url, { session: 'memory' })
      const writer = await other.auth.signUp({ username: 'writer', email: 'writer@example.com', name: 'writer', password, passwordConfirm: password })
      await other.table('posts').insert({ values: { author_id: writer.id, title: 'A draft of the writer', published: false } })
      await other.table('posts').insert({ values: { author_id: writer.id, title: 'Live from elsewhere', published: true } })
      await page.locator('#posts li', { hasText: 'Live from elsewhere' }).waitFor()
      t.pass('another client\'s post appeared live, without a reload')
      t.same(await page.locator('#posts li strong').allTextContents(), ['Live from elsewhere', 'Hello from the page'], 'newest first; the writer\'s draft is not shown')

      await page.reload()
      await page.locator('#user', { hasText: 'visitor' }).waitFor()
      await page.locator('#posts li', { hasText: 'Live from elsewhere' }).waitFor()
      t.equal(await page.locator('#posts li').count(), 2, 'after a reload: still signed in (localStorage), the posts listed')
      await page.click('#logout')
      await page.locator('#signed-out').waitFor()
      t.ok(await page.isHidden('#signed-in'), 'logged out')
      t.same(problems, [], 'no error in the page, nothing refused by the CSP')
      await server.stop()
    })
  })
}
