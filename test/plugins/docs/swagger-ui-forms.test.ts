// Swagger UI's "Try it out" -> "Execute" with `application/x-www-form-urlencoded` chosen as the body's
// media type, the form filled in as a person would (the fields they want; the others emptied, "Send
// empty value" unticked): the
// document describes form bodies so that Swagger UI sends what the server reads (an object field as
// `values[title]=...`, one record per insert), in Debian's chromium.
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { launch } from '../../fixtures/panel/browser.js'
import { adminToken } from '../../helper.js'
import { authorize, execute, openUi, serveExample, shot } from '../../fixtures/openapi/swagger-ui.js'

const FORM = 'application/x-www-form-urlencoded'
type Block = ReturnType<Page['locator']>

/** Chooses the form media type and sets every field of the form: `values` as given, the rest empty. */
function fillForm (values: Record<string, unknown>) {
  return async (block: Block): Promise<void> => {
    await block.locator('.opblock-section-request-body select.content-type').selectOption(FORM)
    const rows = block.locator('.opblock-section-request-body tr[data-property-name]')
    await rows.first().waitFor()
    for (const row of await rows.all()) {
      const name = await row.getAttribute('data-property-name') ?? ''
      const value = values[name]
      const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)
      const select = row.locator('td.parameters-col_description select')
      if (await select.count() > 0) await select.first().selectOption(text === '' ? { index: 0 } : text)
      else await row.locator('td.parameters-col_description').locator('input:not([type=checkbox]), textarea').first().fill(text)
    }
    // Swagger UI sends an empty optional field as `name=` unless its "Send empty value" is unticked
    // (enabled once the emptied input has reached the form's state).
    for (const row of await rows.all()) {
      if (values[await row.getAttribute('data-property-name') ?? ''] !== undefined) continue
      const sendEmpty = row.locator('.parameter__empty_value_toggle input[type=checkbox]')
      if (await sendEmpty.count() === 0) continue
      await sendEmpty.and(block.page().locator(':enabled')).waitFor()
      if (await sendEmpty.isChecked()) await sendEmpty.uncheck()
    }
  }
}

async function send (t: Test, page: Page, operationId: string, values: Record<string, unknown>): Promise<unknown> {
  const { status, body, url } = await execute(page, operationId, fillForm(values))
  if (status !== 200) await shot(page, `failed-form-${operationId}`)
  t.equal(status, 200, `${operationId} as a form: ${status} ${url} ${status === 200 ? '' : body.slice(0, 300)}`)
  return status === 200 ? JSON.parse(body) : undefined
}

t.test('posts: every route that takes a form, sent from Swagger UI as a form', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const served = await serveExample(t)
  const ui = await openUi(t, browser, served.origin)
  await authorize(ui.page, adminToken)
  const { page } = ui
  t.match(await send(t, page, 'posts_select_post', { where: "title == 'Seeded post'" }), [{ id: 'example-posts-1' }], 'select')
  t.match(await send(t, page, 'posts_list_post', { where: "title == 'Seeded post'", select: 'id' }), { items: [{ id: 'example-posts-1' }], total: 1 }, 'list')
  t.match(await send(t, page, 'posts_insert', { values: { author_id: 'example-users-1', title: 'From a form', published: true }, returning: '*' }),
    [{ title: 'From a form', published: true, author_id: 'example-users-1' }], 'insert: one record, fields typed')
  t.match(await send(t, page, 'posts_update', { where: "title == 'From a form'", setValues: { title: 'Changed by a form' }, set: {}, returning: 'title' }), [{ title: 'Changed by a form' }], 'update')
  t.match(await send(t, page, 'posts_edit', { title: 'Edited by a form' }), { id: 'example-posts-1' }, 'edit')
  t.match(await send(t, page, 'posts_delete', { where: "title == 'Changed by a form'", returning: 'title' }), [{ title: 'Changed by a form' }], 'delete')
  const seeded = await (await fetch(`${served.api}/table/posts/view/example-posts-1`, { headers: { authorization: `Bearer ${adminToken}` } })).json()
  t.equal(seeded.title, 'Edited by a form', 'the edit reached the record')
  t.same(ui.errors, [], 'no uncaught error in the page')
})
