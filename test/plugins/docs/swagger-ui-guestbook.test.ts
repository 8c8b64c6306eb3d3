// Swagger UI's "Try it out" -> "Execute" with the document's default example succeeds on every route
// of the example project's `guestbook` table, uploads included: the multipart insert and edit, with a
// file chosen in the form's file input and the `@jsonPayload` example as the document gives it.
import t from 'tap'
import { launch } from '../../fixtures/panel/browser.js'
import { PHOTO, chooseUpload, expect2xx, tableRoutes } from '../../fixtures/openapi/swagger-ui.js'

t.test('every guestbook route succeeds with its default example, uploads included', async (t) => {
  const browser = await launch(t)
  if (browser === undefined) return
  const { served, ui } = await tableRoutes(t, browser, 'guestbook')

  const [inserted] = JSON.parse(await expect2xx(t, ui.page, 'guestbook_insert', chooseUpload))
  t.match(inserted?.photo, /^photo_[a-z0-9_]+\.png$/, 'the multipart insert stored the chosen file')
  const download = await fetch(`${served.api}/files/guestbook/${inserted.id}/${inserted.photo}`)
  t.equal(download.headers.get('content-type'), 'image/png')
  t.same(Buffer.from(await download.arrayBuffer()), PHOTO.buffer, 'and it downloads byte for byte')

  const edited = JSON.parse(await expect2xx(t, ui.page, 'guestbook_edit', chooseUpload))
  t.equal(edited.id, 'example-guestbook-1', 'the multipart edit answered the record')
  const view = await (await fetch(`${served.api}/table/guestbook/view/example-guestbook-1`)).json()
  t.match(view.photo, /^photo_[a-z0-9_]+\.png$/, 'the edit replaced the seeded file with the chosen one')

  await expect2xx(t, ui.page, 'guestbook_delete')
  t.same(ui.errors, [], 'no uncaught error in the page')
})
