// "Backups": the complete backups (GET /backups) with their time, size, rows and files; "Back up now"
// (POST /backups), "Download" (GET /backups/{name}) and "Delete" (DELETE /backups/{name}). The
// superadmin only: the server refuses everyone else, and the page says so instead of a list.
// Restoring is `fastbase restore <archive>` with the server stopped: the page says how.
import { api, ApiError } from '../api.js'
import { announce, h, replace, uid } from '../dom.js'
import { download } from '../download.js'
import { formatDate } from '../format.js'
import { confirmDialog } from './dialog.js'

function size (bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = Number(bytes) || 0
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`
}

const rowCount = (tables) => Object.values(tables ?? {}).reduce((sum, n) => sum + (Number(n) || 0), 0)

export function renderBackups (root, { can }) {
  const heading = h('h2', { id: uid('backups'), tabindex: '-1' }, 'Backups')
  const alert = h('div', { class: 'alert', role: 'alert' })
  const status = h('p', { class: 'status', role: 'status' })
  const summary = h('p', {})
  const body = h('div', {}, h('p', {}, can.migrate ? 'Loading backups…' : ''))
  const createButton = h('button', { type: 'button', class: 'button primary', disabled: !can.migrate, onclick: () => create() }, 'Back up now')
  const note = can.migrate ? null : h('p', { class: 'note' }, 'Only the superadmin can see and make backups.')

  replace(root, h('section', { class: 'view' },
    h('div', { class: 'view-head' }, heading, h('div', { class: 'buttons' }, createButton)),
    note, status, alert, summary, body,
    h('p', { class: 'hint' }, 'To restore one, stop every server on this database and run ', h('code', {}, 'npx fastbase restore <archive or name>'), '. The current database is kept beside the restored one.')))

  function table (backups) {
    if (backups.length === 0) return h('p', {}, 'No backup yet.')
    return h('div', { class: 'table-wrap' }, h('table', { class: 'records backups' },
      h('caption', {}, 'Complete backups, newest first'),
      h('thead', {}, h('tr', {}, ['taken', 'name', 'size', 'rows', 'files', 'schema', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, backups.map((b) => h('tr', {},
        h('td', {}, h('time', { datetime: String(b.createdAt) }, formatDate(b.createdAt))),
        h('td', {}, String(b.name)),
        h('td', {}, size(b.archive?.size)),
        h('td', {}, String(rowCount(b.tables))),
        h('td', {}, b.files?.included ? String(b.files.count) : 'not included'),
        h('td', {}, String(b.schema?.last ?? '')),
        h('td', { class: 'row-actions' },
          h('button', { type: 'button', class: 'button', onclick: () => download(`/backups/${encodeURIComponent(b.name)}`, `${b.name}.tar.gz`, (m) => announce(alert, m)) }, 'Download'),
          h('button', { type: 'button', class: 'button danger', onclick: () => remove(b.name) }, 'Delete')))))))
  }

  async function load () {
    if (!can.migrate) return
    try {
      const answer = await api.get('/backups')
      const backups = Array.isArray(answer?.backups) ? answer.backups : []
      replace(summary,
        answer?.schedule ? `Scheduled: ${answer.schedule}${answer.nextScheduled ? ` (next ${formatDate(answer.nextScheduled)})` : ''}` : 'No schedule: backups are taken on demand.',
        ` Keeping the newest ${answer?.keep ?? '?'}.`,
        answer?.lastSuccess ? ` Last stored: ${formatDate(answer.lastSuccess)}.` : ' None stored yet.')
      replace(body, table(backups))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status === 401) return
      replace(body)
      announce(alert, error.status === 403 ? `Not allowed: ${error.message}` : `Could not load backups: ${error.message}`)
    }
  }

  async function create () {
    announce(alert, '')
    createButton.disabled = true
    announce(status, 'Backing up… the server keeps serving meanwhile.')
    try {
      const record = await api.post('/backups')
      announce(status, `Stored ${record?.name ?? 'the backup'} (${size(record?.archive?.size)}).`)
      await load()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      announce(status, '')
      if (error.status !== 401) announce(alert, `Backup failed: ${error.message}`)
    } finally {
      createButton.disabled = false
    }
  }

  async function remove (name) {
    const ok = await confirmDialog({ title: 'Delete this backup?', message: `${name} is deleted from the backup storage for good.`, confirmLabel: 'Delete' })
    if (!ok) return
    announce(alert, '')
    try {
      await api.delete(`/backups/${encodeURIComponent(name)}`)
      announce(status, `Deleted ${name}.`)
      await load()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status !== 401) announce(alert, `Delete failed: ${error.message}`)
    }
  }

  load()
  return { focus: () => heading.focus() }
}
