// Swagger UI's "Try it out" -> "Execute" with the document's default example succeeds on every route
// of the example project's `users` table, in Debian's chromium, signed in with the service token
// (test/fixtures/openapi/swagger-ui.ts). One table per file keeps each file inside tap's timeout.
import t from 'tap'
import { launch } from '../../fixtures/panel/browser.js'
import { plainTableRoutes } from '../../fixtures/openapi/swagger-ui.js'

t.test('every users route succeeds with its default example', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  await plainTableRoutes(t, browser, 'users')
})
