// Early answers to uploads in a real browser (Debian's chromium, playwright-core), on both dialects
// (decision D91): a page's `fetch` of a large File or Blob that fastbase refuses before reading it
// reads the status and the JSON error body, not a network error or a fetch that never ends. Chromium
// sends the whole body before it reads an answer, so these bodies stay under `lingerBytes`.
import t from 'tap'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { launch } from '../fixtures/panel/browser.js'
import { buildApp, forEachDialect } from '../helper.js'
import { DEFAULT_LIMITS, lingerBytes } from '../../lib/limits.js'
import type { DatabaseSettings } from '../../schemas/config.js'

const MiB = 1024 * 1024
// A fetch the server never answers fails the test instead of hanging it.
const FETCH_WITHIN_MS = 30_000

const id = { name: 'id', type: 'text', sqlType: 'text', usage: 'record_uid', primary: true, notNull: true } as const
const file = { name: 'file', type: 'file', sqlType: 'text' } as const
const rules = (createRule: string) => ({ name: 'rules' as const, listRule: 'true', viewRule: 'true', createRule, updateRule: null, deleteRule: null })

const config: DatabaseSettings = {
  jwtSecret: 'x',
  appUrl: 'http://localhost',
  tables: [
    { name: 'docs', autoSetUid: true, fields: [id, file], extensions: [rules('auth.uid != null')] },
    { name: 'open', autoSetUid: true, fields: [id, file], extensions: [rules('true')] },
    { name: 'notes', autoSetUid: true, fields: [id, { name: 'title', type: 'text', sqlType: 'text' }], extensions: [rules('true')] }
  ]
}

/** What the page sends: `files` Files of `mib` MiB as a form, or one Blob of `mib` MiB as JSON. */
interface Upload { path: string, files?: number, mib: number }

const browser: Browser | undefined = await launch(t)
if (browser !== undefined) {
  forEachDialect(t, 'a fetch upload refused before its body is read gets the answer', async (t, dialect) => {
    const app = await buildApp(t, config, { dialect })
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.server.closeAllConnections())
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const page = await browser.newPage()
    t.teardown(() => page.close())
    await page.goto(`${origin}/api/v1/health`)

    const upload = async (upload: Upload): Promise<{ status: number, body: unknown } | string> => await page.evaluate(async ({ path, files, mib, within }) => {
      const bytes = new Uint8Array(mib * 1024 * 1024)
      let body: FormData | Blob
      if (files === undefined) {
        body = new Blob([bytes], { type: 'application/json' })
      } else {
        body = new FormData()
        for (let i = 0; i < files; i++) body.append('@filePayload', new File([bytes], `f${i}.bin`))
      }
      try {
        const answer = await fetch(path, { method: 'POST', body, signal: AbortSignal.timeout(within) })
        return { status: answer.status, body: await answer.json() }
      } catch (error) {
        return String(error)
      }
    }, { ...upload, within: FETCH_WITHIN_MS })

    t.ok(96 * MiB < lingerBytes(DEFAULT_LIMITS), 'every body below stays under lingerBytes')
    t.same(await upload({ path: '/api/v1/table/docs/insert', files: 1, mib: 90 }), { status: 403, body: { code: 403, message: 'Forbidden', data: {} } },
      'a 90 MiB file to a table the caller may not write: 403 and its body')
    t.match(await upload({ path: '/api/v1/table/open/insert', files: 12, mib: 8 }), { status: 413, body: { code: 413 } },
      '12 files of 8 MiB to a table that takes 10: 413 and its body')
    t.same(await upload({ path: '/api/v1/table/notes/insert', mib: 90 }), { status: 413, body: { code: 413, message: 'Request body is too large', data: {} } },
      'a 90 MiB JSON body: 413 and its body')
    t.equal((await fetch(`${origin}/api/v1/table/docs/select`)).status, 200, 'the server still answers')
  })
}
