// A table's records: one page at a time from GET /table/{t}/list (filter, sort, offset), the total,
// "Previous" / "Next", and per row "Edit" / "Delete". Only the page on screen is ever in the DOM.
import { api, apiUrl, ApiError } from '../api.js'
import { announce, h, replace, uid } from '../dom.js'
import { download, smallestThumb, thumbnailImage } from '../download.js'
import { formatValue } from '../format.js'
import { whereRow } from '../schema.js'
import { confirmDialog } from './dialog.js'
import { openRecordForm } from './record-form.js'

export const PAGE_SIZE = 50

/** The view's state as it appears after `#/table/<name>?` (so a reload keeps filter, sort and page). */
function stateFromQuery (query) {
  const offset = Number.parseInt(query.get('offset') ?? '0', 10)
  return { where: query.get('where') ?? '', order: query.get('order') ?? '', offset: Number.isFinite(offset) && offset > 0 ? offset : 0 }
}

function hashOf (name, state) {
  const q = new URLSearchParams()
  if (state.where) q.set('where', state.where)
  if (state.order) q.set('order', state.order)
  if (state.offset > 0) q.set('offset', String(state.offset))
  const s = q.toString()
  return `#/table/${encodeURIComponent(name)}${s ? `?${s}` : ''}`
}

/** A filter that fits this table's own fields, for the placeholder. */
function exampleFilter (table) {
  const text = table.fields.find((f) => ['text', 'editor', 'email', 'url', 'select'].includes(f.type) && f !== table.uid && f.noSelect !== true && f.usage !== 'auth_password')
  const number = table.fields.find((f) => f.type === 'integer' || f.type === 'number')
  const parts = []
  if (text) parts.push(`${text.name} ~ '%word%'`)
  if (number) parts.push(`${number.name} > 10`)
  if (parts.length === 0) parts.push(`${table.fields[0]?.name ?? 'id'} != null`)
  return parts.join(' & ')
}

export function renderTable (root, { table, query, can, limit }) {
  const state = stateFromQuery(query)
  const pageSize = Math.max(1, Math.min(PAGE_SIZE, limit ?? PAGE_SIZE))
  const headingId = uid('table-heading')
  const filterId = uid('filter')
  let rows = []
  let total = 0
  let sequence = 0

  const heading = h('h2', { id: headingId, tabindex: '-1' }, table.name)
  const count = h('p', { class: 'count', 'aria-live': 'polite' })
  const newButton = h('button', { type: 'button', class: 'button primary', disabled: !can.write, title: can.write ? undefined : 'Viewers cannot write records', onclick: () => openForm() }, 'New record')
  const filterInput = h('input', { id: filterId, type: 'text', value: state.where, autocomplete: 'off', spellcheck: 'false', placeholder: `e.g. ${exampleFilter(table)}`, 'aria-describedby': `${filterId}-help ${filterId}-error` })
  const filterError = h('p', { id: `${filterId}-error`, class: 'field-error', role: 'alert' })
  const filter = h('form', { class: 'filter', role: 'search' },
    h('label', { for: filterId }, 'Filter'),
    filterInput,
    h('p', { id: `${filterId}-help`, class: 'hint' }, 'An expression of the API\'s expression language (==, !=, <, >, ~ with % wildcards, & and, | or). Press Enter to apply; empty shows every record.'),
    filterError)
  const status = h('p', { class: 'status', role: 'status' })
  const alert = h('div', { class: 'alert', role: 'alert' })
  const thead = h('thead')
  const tbody = h('tbody')
  const caption = h('caption')
  const grid = h('table', { class: 'records' }, caption, thead, tbody)
  const previous = h('button', { type: 'button', class: 'button', onclick: () => go(state.offset - pageSize) }, 'Previous')
  const next = h('button', { type: 'button', class: 'button', onclick: () => go(state.offset + pageSize) }, 'Next')
  const pageText = h('span', { class: 'page-text' })

  replace(root, h('section', { class: 'view table-view' },
    h('div', { class: 'view-head' }, heading, count, newButton),
    filter,
    status,
    alert,
    h('div', { class: 'table-wrap', role: 'region', 'aria-label': 'Scrollable records', tabindex: '0' }, grid),
    h('nav', { class: 'pager', 'aria-label': 'Pages' }, previous, pageText, next)))

  filter.addEventListener('submit', (event) => {
    event.preventDefault()
    state.where = filterInput.value.trim()
    state.offset = 0
    load()
  })

  function go (offset) {
    state.offset = Math.max(0, offset)
    load()
  }

  function sortBy (field) {
    state.order = state.order === field.name ? `-${field.name}` : field.name
    state.offset = 0
    load()
  }

  function openForm (record) {
    announce(status, '')
    openRecordForm({
      table,
      record,
      canWrite: can.write,
      onSaved: (_saved, mode) => {
        if (mode !== 'unchanged') announce(status, mode === 'create' ? 'Record created.' : 'Record saved.')
        load()
      }
    })
  }

  async function remove (record) {
    const where = whereRow(table, record)
    const label = table.key.map((f) => record[f.name]).join(', ')
    const ok = await confirmDialog({
      title: 'Delete record?',
      message: `Delete the record ${label} from ${table.name}? This cannot be undone.`,
      confirmLabel: 'Delete'
    })
    if (!ok) return
    announce(status, '')
    try {
      await api.post(`/table/${encodeURIComponent(table.name)}/delete`, { where })
      announce(status, 'Record deleted.')
      await load()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status !== 401) announce(alert, `Delete failed: ${error.message}`)
    }
  }

  function headerRow () {
    const sortField = state.order.replace(/^-/, '')
    const direction = state.order.startsWith('-') ? 'descending' : 'ascending'
    return h('tr', {},
      h('th', { scope: 'col', class: 'manage' }, 'Manage'),
      table.fields.map((field) => {
        const sorted = field.name === sortField
        return h('th', { scope: 'col', 'aria-sort': sorted ? direction : undefined },
          h('button', { type: 'button', class: 'sort', onclick: () => sortBy(field), title: `Sort by ${field.name}` },
            field.name,
            h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, sorted ? (direction === 'ascending' ? ' ▲' : ' ▼') : '')))
      }))
  }

  function cell (record, field) {
    const value = record[field.name]
    if (field.type === 'file' && typeof value === 'string' && value !== '' && table.uid !== undefined) {
      const path = `/files/${encodeURIComponent(table.name)}/${encodeURIComponent(String(record[table.uid.name]))}/${encodeURIComponent(value)}`
      // A field that lists thumbnail sizes shows its smallest beside the name (decision D123).
      const thumb = smallestThumb(field.thumbs)
      return h('td', { class: 't-file' }, h('a', {
        href: apiUrl(path),
        class: 'file-link',
        onclick: (event) => { event.preventDefault(); download(path, value, (m) => announce(alert, m)) }
      }, thumb === undefined ? [] : thumbnailImage(path, thumb, value), value))
    }
    return h('td', { class: `t-${field.type}` }, formatValue(value, field))
  }

  function bodyRows () {
    if (rows.length === 0) {
      return h('tr', {}, h('td', { colspan: String(table.fields.length + 1), class: 'empty' }, state.where ? 'No record matches the filter.' : 'No records yet.'))
    }
    const keyless = table.key.length === 0
    return rows.map((record) => h('tr', {},
      h('td', { class: 'manage' },
        h('button', { type: 'button', class: 'button small', disabled: !can.write || keyless, onclick: () => openForm(record) }, 'Edit'),
        h('button', { type: 'button', class: 'button small danger', disabled: !can.write || keyless, onclick: () => remove(record) }, 'Delete')),
      table.fields.map((field) => cell(record, field))))
  }

  function render () {
    const first = total === 0 ? 0 : state.offset + 1
    const last = state.offset + rows.length
    const pages = Math.max(1, Math.ceil(total / pageSize))
    const page = Math.floor(state.offset / pageSize) + 1
    count.textContent = `${total} ${total === 1 ? 'record' : 'records'}`
    caption.textContent = total === 0 ? `${table.name}: no records` : `${table.name}: records ${first}–${last} of ${total}`
    pageText.textContent = `Page ${page} of ${pages}`
    previous.disabled = state.offset === 0
    next.disabled = state.offset + pageSize >= total
    replace(thead, headerRow())
    replace(tbody, bodyRows())
  }

  async function load () {
    const mine = ++sequence
    history.replaceState(null, '', hashOf(table.name, state))
    filterError.textContent = ''
    announce(alert, '')
    root.querySelector('.table-view')?.setAttribute('aria-busy', 'true')
    performance.mark('fastbase:list-start')
    try {
      const answer = await api.get(`/table/${encodeURIComponent(table.name)}/list`, {
        limit: pageSize, offset: state.offset || undefined, where: state.where || undefined, order: state.order || undefined
      })
      if (mine !== sequence) return
      performance.mark('fastbase:list-fetched')
      rows = Array.isArray(answer?.items) ? answer.items : []
      total = typeof answer?.total === 'number' ? answer.total : rows.length
      // A page past the end (rows deleted meanwhile): show the last page instead.
      if (rows.length === 0 && total > 0 && state.offset > 0) {
        state.offset = Math.floor((total - 1) / pageSize) * pageSize
        return await load()
      }
      render()
      performance.mark('fastbase:list-rendered')
      performance.measure('fastbase:list-fetch', 'fastbase:list-start', 'fastbase:list-fetched')
      performance.measure('fastbase:list-render', 'fastbase:list-fetched', 'fastbase:list-rendered')
      performance.measure('fastbase:list-total', 'fastbase:list-start', 'fastbase:list-rendered')
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (mine !== sequence || error.status === 401) return
      rows = []
      total = 0
      render()
      count.textContent = ''
      if (error.status === 400 && state.where) {
        filterError.textContent = error.message
        filterInput.setAttribute('aria-invalid', 'true')
      } else {
        announce(alert, `Could not load ${table.name}: ${error.message}`)
      }
      return
    } finally {
      if (mine === sequence) root.querySelector('.table-view')?.removeAttribute('aria-busy')
    }
    filterInput.removeAttribute('aria-invalid')
  }

  load()
  return { focus: () => heading.focus() }
}
