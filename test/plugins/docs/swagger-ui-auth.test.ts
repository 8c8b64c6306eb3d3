// Swagger UI's "Try it out" -> "Execute" with the document's default examples on the example
// project's account routes and health, in Debian's chromium: sign-up and login as the example
// account, then "Authorize" with the token login answered for the routes that need a signed-in user
// (change-password, request-verification, both logouts). Admin routes and the download:
// test/plugins/docs/swagger-ui-admin.test.ts.
import t from 'tap'
import { launch } from '../../fixtures/panel/browser.js'
import { ACCOUNT_OPS, authorize, expect2xx, openUi, serveExample } from '../../fixtures/openapi/swagger-ui.js'

t.test('account routes and health succeed with their default examples', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const served = await serveExample(t)
  const { page, errors } = await openUi(t, browser, served.origin)
  const ran: string[] = []
  const run = async (operationId: string) => {
    ran.push(operationId)
    return await expect2xx(t, page, operationId)
  }

  await run('health')
  const signUp = JSON.parse(await run('users_auth_sign_up'))
  t.equal(signUp.record?.email, 'grace@example.com', 'sign-up created the example account')
  const login = JSON.parse(await run('users_auth_login'))
  t.equal(login.record?.id, signUp.record?.id, 'login with the example credentials')

  await authorize(page, login.token)
  const fileToken = JSON.parse(await run('files_token'))
  t.type(fileToken.token, 'string', 'a signed-in user gets a file token')
  await run('users_auth_change_password')
  await run('users_auth_request_verification')
  await run('users_auth_request_password_reset')
  await run('auth_logout')
  await run('users_auth_logout')
  t.same(ran, ACCOUNT_OPS, 'the account operations ran')
  t.same(errors, [], 'no uncaught error in the page')
})
