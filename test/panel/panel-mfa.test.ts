// The panel's second factor in a real browser (Debian's chromium via playwright-core) on both
// dialects: the superadmin turns TOTP on in "Two-factor sign-in" (URI and secret shown, a wrong code
// refused, the recovery codes shown once), signs out, signs in with the token and then a code (a wrong
// one refused), with a recovery code (accepted once), is sent back to the password after too many
// wrong codes or when the challenge expired, and turns it off again. Codes come from the test's own RFC 6238 generator.
import t from 'tap'
import type { Page } from 'playwright-core'
import { adminToken, forEachDialect } from '../helper.js'
import { EDITOR_PASSWORD } from '../fixtures/panel/config.js'
import { launch, openPanel, screenshot, signIn } from '../fixtures/panel/browser.js'
import { clean, serve } from '../fixtures/panel/helpers.js'
import { totpNow } from '../fixtures/totp.js'
import { MFA_CHALLENGES } from '../../lib/auth/stores/store-tables.js'

const browser = await launch(t)

/** The token, then the second-factor form: waits for it. */
async function password (page: Page): Promise<void> {
  await page.getByLabel('Token or password').fill(adminToken)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByLabel('Authentication code').waitFor()
}

async function code (page: Page, value: string): Promise<void> {
  await page.getByLabel('Authentication code').fill(value)
  await page.getByRole('button', { name: 'Verify' }).click()
}

const signedIn = async (page: Page) => await page.getByRole('button', { name: 'Sign out' }).count() === 1

forEachDialect(t, 'the superadmin turns TOTP on, signs in with it, and turns it off', async (t, dialect) => {
  if (browser === undefined) return t.plan(0, 'chromium is not installed')
  const served = await serve(t, dialect)
  const panel = await openPanel(t, browser!, served.panel)
  const { page } = panel
  await signIn(page, adminToken)
  let secret = ''
  let recovery: string[] = []

  await t.test('turn it on: the URI and the secret, a wrong code refused, the recovery codes once', async (t) => {
    await page.getByRole('link', { name: 'Two-factor sign-in' }).click()
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 2 }).waitFor()
    await page.getByRole('button', { name: 'Turn on' }).click()
    const uri = await page.locator('code.mfa-uri').textContent() ?? ''
    secret = await page.locator('code.mfa-secret').textContent() ?? ''
    t.match(secret, /^[A-Z2-7]{32}$/)
    t.match(uri, new RegExp(`^otpauth://totp/Panel%20Test:superadmin%40127\\.0\\.0\\.1\\?secret=${secret}&`), 'the otpauth URI, as text')
    t.match(await page.getByText('No QR code here').textContent(), /paste this otpauth/)
    await page.getByLabel('Code from the app').fill('000000')
    await page.getByRole('button', { name: 'Confirm' }).click()
    await page.getByRole('alert').filter({ hasText: 'Could not confirm' }).waitFor()
    await page.getByLabel('Code from the app').fill(totpNow(secret))
    await page.getByRole('button', { name: 'Confirm' }).click()
    const list = page.getByRole('list', { name: 'Recovery codes' })
    await list.waitFor()
    recovery = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim())
    t.equal(recovery.length, 10)
    t.match(recovery[0], /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/)
    t.match(await page.getByRole('status').textContent(), /on for superadmin/)
    await screenshot(page, 'two-factor-on')
    await page.reload()
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 2 }).waitFor()
    t.equal(await page.getByRole('list', { name: 'Recovery codes' }).count(), 0, 'not shown again')
  })

  await t.test('sign in: the token, then a code; a wrong code is refused', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await password(page)
    await screenshot(page, 'second-factor')
    t.notOk(await signedIn(page), 'the token alone does not sign in')
    t.same(await page.evaluate(() => sessionStorage.length), 0, 'nothing stored before the code')
    await code(page, '000000')
    await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor()
    t.notOk(await signedIn(page))
    await code(page, totpNow(secret, 1))
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.match(await page.getByText('Signed in as').textContent(), /superadmin/)
  })

  await t.test('a recovery code signs in once; too many wrong codes start over', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await password(page)
    await code(page, recovery[0].toLowerCase())
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.pass('a recovery code, as typed in lower case')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await password(page)
    await code(page, recovery[0])
    await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor()
    t.notOk(await signedIn(page), 'the same recovery code again: refused')
    for (let i = 0; i < 3; i++) {
      await code(page, '000000')
      await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor()
    }
    // The fifth attempt spends the challenge: the answer says so, not one refusal later.
    await code(page, '000000')
    await page.getByLabel('Token or password').waitFor()
    t.match(await page.getByRole('alert').textContent(), /too many wrong codes\. Sign in again/, 'the fifth wrong code: back to the password, saying why')
    await password(page)
    await code(page, recovery[1])
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.pass('a new sign-in takes a code the spent challenge did not use')
  })

  await t.test('an expired challenge: back to the password, saying so', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await password(page)
    await served.app.fastbase.db(MFA_CHALLENGES).update({ expires_at: Math.floor(Date.now() / 1000) - 1 })
    await code(page, recovery[2])
    await page.getByLabel('Token or password').waitFor()
    t.match(await page.getByRole('alert').textContent(), /expired/)
    t.notOk(await signedIn(page))
    await password(page)
    await code(page, recovery[2])
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.pass('the code the expired challenge refused was not spent')
  })

  await t.test('turn it off with a recovery code: the token alone signs in again', async (t) => {
    await page.getByRole('link', { name: 'Two-factor sign-in' }).click()
    await page.getByLabel('Code or recovery code').fill('000000')
    await page.getByRole('button', { name: 'Turn off' }).click()
    await page.getByRole('alert').filter({ hasText: 'Could not turn it off' }).waitFor()
    await page.getByLabel('Code or recovery code').fill(recovery[3])
    await page.getByRole('button', { name: 'Turn off' }).click()
    await page.getByRole('status').filter({ hasText: 'off for superadmin' }).waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(page, adminToken)
    t.ok(await signedIn(page), 'no second step')
  })

  await t.test('an editor is told only the superadmin manages it', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(page, EDITOR_PASSWORD)
    await page.getByRole('link', { name: 'Two-factor sign-in' }).click()
    await page.getByText('Only the superadmin').waitFor()
    t.equal(await page.getByRole('button', { name: 'Turn on' }).count(), 0)
  })

  await clean(t, panel, served.origin)
})
