// Swagger UI's "Try it out" -> "Execute" with the document's default example succeeds on every route
// of the example project's `posts` table, in Debian's chromium, signed in with the service token
// (test/fixtures/openapi/swagger-ui.ts). One table per file keeps each file inside tap's timeout.
import t from 'tap'
import { launch } from './fixtures/panel/browser.js'
import { expect2xx, tableRoutes } from './fixtures/openapi/swagger-ui.js'

t.test('every posts route succeeds with its default example', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const { served, ui } = await tableRoutes(t, browser, 'posts')
  const listed = await (await fetch(`${served.api}/table/posts/list?limit=100`, { headers: { authorization: 'Bearer fastbase-test-admin-service-token' } })).json()
  t.equal(listed.total, 2, 'the seeded record and the inserted example are there')
  await expect2xx(t, ui.page, 'posts_delete')
  t.same(ui.errors, [], 'no uncaught error in the page')
})
