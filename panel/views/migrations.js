// "Migrations": applied and pending schema changes (GET /migrations); "Preview" (dry run) and
// "Apply pending" (POST /migrations) for the superadmin only. Apply runs the safe changes; the
// destructive ones only when the superadmin ticks the box that names them (`allowDestructive`).
import { api, ApiError } from '../api.js'
import { announce, h, replace, uid } from '../dom.js'
import { formatDate } from '../format.js'
import { openDialog } from './dialog.js'

const list = (v) => Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]

function sqlBlock (sql) {
  const text = list(sql).map(String).join(';\n')
  if (text === '') return h('span', { class: 'v-null' }, 'no SQL')
  return h('details', {}, h('summary', {}, 'SQL'), h('pre', { class: 'sql' }, text))
}

function appliedTable (migrations) {
  if (migrations.length === 0) return h('p', {}, 'No migration applied yet.')
  return h('div', { class: 'table-wrap' }, h('table', { class: 'records migrations' },
    h('caption', {}, 'Applied migrations, oldest first'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'name'), h('th', { scope: 'col' }, 'applied_at'), h('th', { scope: 'col' }, 'sql'))),
    h('tbody', {}, migrations.map((m) => h('tr', {},
      h('td', {}, String(m?.name ?? '')),
      h('td', {}, m?.applied_at ? h('time', { datetime: String(m.applied_at) }, formatDate(m.applied_at)) : ''),
      h('td', { class: 'sql-cell' }, sqlBlock(m?.sql)))))))
}

function pendingTable (pending, caption) {
  if (pending.length === 0) return h('p', {}, 'Nothing pending: the database matches the config.')
  return h('div', { class: 'table-wrap' }, h('table', { class: 'records migrations' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ['name', 'table', 'kind', 'reason', 'sql'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, pending.map((m) => h('tr', {},
      h('td', {}, String(m?.name ?? '')),
      h('td', {}, m?.table ? String(m.table) : ''),
      h('td', {}, m?.destructive ? h('strong', { class: 'badge danger' }, 'destructive') : h('span', { class: 'badge' }, 'safe')),
      h('td', {}, m?.reason ? String(m.reason) : '', list(m?.waitsFor).length > 0 ? h('p', { class: 'hint' }, `after ${list(m.waitsFor).join(', ')}`) : null),
      h('td', { class: 'sql-cell' }, sqlBlock(m?.sql)))))))
}

/**
 * Asks before an apply; resolves `{ allowDestructive }`, or null when cancelled. Destructive changes
 * are listed and run only when their box is ticked: an "Apply" alone never loses data.
 */
function applyDialog (pending) {
  return new Promise((resolve) => {
    const destructive = pending.filter((m) => m?.destructive)
    const safe = pending.length - destructive.length
    let answer = null
    const boxId = uid('allow-destructive')
    const allow = destructive.length > 0 ? h('input', { type: 'checkbox', id: boxId }) : null
    const cancel = h('button', { type: 'button', class: 'button', autofocus: true, onclick: () => close() }, 'Cancel')
    const confirm = h('button', { type: 'button', class: 'button primary', onclick: () => { answer = { allowDestructive: allow?.checked === true }; close() } }, 'Apply')
    allow?.addEventListener('change', () => { confirm.className = allow.checked ? 'button danger' : 'button primary' })
    const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`
    const body = [
      h('p', {}, `${plural(pending.length, 'pending migration', 'pending migrations')}: ${safe} safe${destructive.length > 0 ? `, ${destructive.length} destructive` : ''}.`),
      destructive.length > 0
        ? [
            h('ul', {}, destructive.map((m) => h('li', {}, h('strong', {}, String(m?.name ?? '')), m?.reason ? `: ${m.reason}` : ''))),
            h('p', {}, h('label', { for: boxId }, allow, ' Also apply the destructive migrations listed above: the data they drop or change is lost for good (back up first)')),
            h('p', { class: 'hint' }, 'Unticked, only the safe ones are applied; the destructive ones stay pending.')
          ]
        : null
    ]
    const { close } = openDialog({
      title: 'Apply pending migrations?',
      className: 'confirm',
      content: [h('div', { class: 'dialog-body' }, body), h('div', { class: 'dialog-buttons' }, cancel, confirm)],
      onClose: () => resolve(answer)
    })
  })
}

function explain (error) {
  if (error.status === 404) return `The server has no migrations endpoint (404 ${error.message}). Update fastbase to manage migrations here.`
  if (error.status === 403) return `Not allowed: ${error.message}`
  return `Could not load migrations: ${error.status ? `${error.status} ` : ''}${error.message}`
}

export function renderMigrations (root, { can }) {
  const headingId = uid('migrations')
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Migrations')
  const alert = h('div', { class: 'alert', role: 'alert' })
  const status = h('p', { class: 'status', role: 'status' })
  const body = h('div', { class: 'migrations-body' }, h('p', {}, 'Loading migrations…'))
  const preview = h('div', { class: 'preview' })
  const note = can.migrate ? null : h('p', { class: 'note' }, 'Only the superadmin can apply migrations.')
  const previewButton = h('button', { type: 'button', class: 'button', disabled: true, onclick: () => dryRun() }, 'Preview')
  const applyButton = h('button', { type: 'button', class: 'button primary', disabled: true, onclick: () => apply() }, 'Apply pending')
  let pending = []

  replace(root, h('section', { class: 'view' },
    h('div', { class: 'view-head' }, heading, h('div', { class: 'buttons' }, previewButton, applyButton)),
    note, status, alert, body, preview))

  function setButtons () {
    previewButton.disabled = !can.migrate || pending.length === 0
    applyButton.disabled = !can.migrate || pending.length === 0
  }

  async function load () {
    try {
      const answer = await api.get('/migrations')
      pending = list(answer?.pending)
      replace(body,
        h('h3', {}, `Pending (${pending.length})`),
        answer?.outdated ? h('p', {}, 'Nothing is planned while this server runs an older config.') : pendingTable(pending, 'Pending migrations, in the order they would apply'),
        h('h3', {}, `Applied (${list(answer?.migrations).length})`),
        appliedTable(list(answer?.migrations)))
      const dropped = list(answer?.dropsEveryTable)
      // Decision D98: the database applied a newer config since this server started; it plans nothing.
      if (answer?.outdated) announce(alert, `This server runs an older config: restart it. The database applied a newer config at ${formatDate(answer.outdated.newerAppliedAt)}; until this server restarts with it, nothing is planned here, so nothing that config made is dropped.`)
      else if (dropped.length > 0) announce(alert, `This config would drop every table it recorded (${dropped.join(', ')}) and keep none: it is probably not the config that made this database. An apply is refused; check the server's config and DATABASE_URL.`)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status === 401) return
      pending = []
      replace(body)
      announce(alert, explain(error))
    }
    setButtons()
  }

  async function dryRun () {
    announce(alert, '')
    try {
      const plan = await api.post('/migrations', { dryRun: true })
      replace(preview, h('h3', {}, 'Preview (nothing applied)'), pendingTable(list(plan?.pending ?? plan?.planned ?? plan?.applied), 'Migrations the apply would run'))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status !== 401) announce(alert, `Preview failed: ${error.message}`)
    }
  }

  async function apply () {
    const choice = await applyDialog(pending)
    if (choice === null) return
    announce(alert, '')
    applyButton.disabled = true
    try {
      const answer = await api.post('/migrations', choice.allowDestructive ? { allowDestructive: true } : {})
      const applied = list(answer?.applied)
      const left = list(answer?.pending).length
      announce(status, `Applied ${applied.length} ${applied.length === 1 ? 'migration' : 'migrations'}.${left > 0 ? ` ${left} left pending (destructive, or waiting for one).` : ''}`)
      replace(preview)
      await load()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status !== 401) announce(alert, `Apply failed: ${error.message}`)
      setButtons()
    }
  }

  load()
  return { focus: () => heading.focus() }
}
