// The record form ("New record" and each row's "Edit"): one labelled, typed input per writable
// field; "Save" inserts or edits through the table API; the API's validation and constraint errors
// are shown at their field, anything else at the form.
import { api, ApiError } from '../api.js'
import { h, replace, uid } from '../dom.js'
import { dateInputValue } from '../format.js'
import { isPassword, literalDefault, whereRow } from '../schema.js'
import { openDialog } from './dialog.js'

const TEXT_INPUT_TYPES = { email: 'email', url: 'url' }

function hintOf (field, mode) {
  const parts = [field.type]
  if (field.type === 'select' && Array.isArray(field.values)) parts.push(`one of ${field.values.join(', ')}`)
  if (field.notNull === true && field.default === undefined && mode === 'create' && field.type !== 'bool') parts.push('required')
  if (field.type === 'json') parts.push('JSON text')
  if (field.confirms) parts.push(`repeat ${field.confirms}`)
  else if (isPassword(field)) parts.push(mode === 'edit' ? 'leave empty to keep the current one' : 'stored hashed')
  if (field.type === 'file' && mode === 'edit') parts.push('choose a file to replace the current one')
  return parts.join(' · ')
}

/** One field's input: `raw()` is what the admin typed (for change detection), `read()` its API value. */
function control (field, record, mode) {
  const id = uid('field')
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const initial = record?.[field.name]
  const common = { id, name: field.name, 'aria-describedby': `${hintId} ${errorId}` }
  const required = field.notNull === true && field.default === undefined && mode === 'create' && field.type !== 'bool'
  if (required) common['aria-required'] = 'true'
  let input
  let raw
  let read
  let removeFile
  switch (field.type) {
    case 'bool': {
      const checked = mode === 'edit' ? initial === true : literalDefault(field) === true
      input = h('input', { ...common, type: 'checkbox', checked })
      raw = () => input.checked
      read = () => input.checked
      break
    }
    case 'number':
    case 'integer':
      input = h('input', { ...common, type: 'number', step: field.type === 'integer' ? '1' : 'any', inputmode: field.type === 'integer' ? 'numeric' : 'decimal', value: initial === null || initial === undefined ? '' : String(initial) })
      raw = () => input.value
      read = () => input.value === '' ? null : Number(input.value)
      break
    case 'date':
      input = h('input', { ...common, type: 'date', value: dateInputValue(initial) })
      raw = () => input.value
      read = () => input.value === '' ? null : input.value
      break
    case 'json':
      input = h('textarea', { ...common, rows: '4', spellcheck: 'false', value: initial === null || initial === undefined ? '' : JSON.stringify(initial, null, 2) })
      raw = () => input.value
      read = () => {
        if (input.value.trim() === '') return null
        try {
          return JSON.parse(input.value)
        } catch (error) {
          throw new FieldError(`Not valid JSON: ${error.message}`)
        }
      }
      break
    case 'select':
      input = h('select', common,
        h('option', { value: '' }, '(none)'),
        (Array.isArray(field.values) ? field.values : []).map((v) => h('option', { value: String(v), selected: String(v) === String(initial ?? '') }, String(v))))
      raw = () => input.value
      read = () => input.value === '' ? null : input.value
      break
    case 'file': {
      input = h('input', { ...common, type: 'file' })
      raw = () => input.files.length > 0 ? `file:${input.files[0].name}` : removeFile?.checked ? 'removed' : ''
      read = () => input.files.length > 0 ? input.files[0] : null
      if (mode === 'edit' && initial) removeFile = h('input', { type: 'checkbox', id: `${id}-remove`, 'aria-describedby': `${id}-current` })
      break
    }
    case 'editor':
      input = h('textarea', { ...common, rows: '4', value: initial ?? '' })
      raw = () => input.value
      read = () => input.value
      break
    default:
      input = h('input', {
        ...common,
        type: isPassword(field) ? 'password' : TEXT_INPUT_TYPES[field.type] ?? 'text',
        autocomplete: isPassword(field) ? 'new-password' : 'off',
        value: isPassword(field) || initial === null || initial === undefined ? '' : String(initial)
      })
      raw = () => input.value
      read = () => input.value
  }
  const label = h('label', { for: id }, field.name)
  const error = h('p', { id: errorId, class: 'field-error', hidden: true })
  const hint = h('p', { id: hintId, class: 'hint' }, hintOf(field, mode))
  const current = field.type === 'file' && mode === 'edit' && initial
    ? h('p', { class: 'hint', id: `${id}-current` }, `Current file: ${initial}`)
    : null
  const removeRow = removeFile ? h('div', { class: 'check-row' }, removeFile, h('label', { for: `${id}-remove` }, 'Remove current file')) : null
  const wrapper = field.type === 'bool'
    ? h('div', { class: 'field field-check' }, h('div', { class: 'check-row' }, input, label), hint, error)
    : h('div', { class: 'field' }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null, input, hint, current, removeRow, error)
  const initialRaw = raw()
  return {
    field,
    input,
    element: wrapper,
    changed: () => raw() !== initialRaw,
    filled: () => field.type === 'bool' || raw() !== '',
    removed: () => removeFile?.checked === true && input.files.length === 0,
    read,
    setError (message) {
      error.hidden = message === undefined
      error.textContent = message ?? ''
      if (message === undefined) input.removeAttribute('aria-invalid')
      else input.setAttribute('aria-invalid', 'true')
    }
  }
}

class FieldError extends Error {}

/** The values to send: create sends what was filled in, edit what changed. */
function collect (controls, mode) {
  const values = {}
  const files = []
  let invalid = false
  for (const c of controls) {
    c.setError(undefined)
    const include = mode === 'create' ? c.filled() : c.changed()
    if (!include) continue
    if (c.field.type === 'file') {
      if (c.removed()) values[c.field.name] = null
      else if (c.read() !== null) {
        values[c.field.name] = `@filePayload.${files.length}`
        files.push(c.read())
      }
      continue
    }
    if (isPassword(c.field) && c.input.value === '') continue
    try {
      values[c.field.name] = c.read()
    } catch (error) {
      if (!(error instanceof FieldError)) throw error
      c.setError(error.message)
      invalid = true
    }
  }
  return { values, files, invalid }
}

/** JSON, or multipart when files are attached (`@filePayload` parts, then `@jsonPayload`). */
function body (json, files) {
  if (files.length === 0) return { json }
  const form = new FormData()
  for (const file of files) form.append('@filePayload', file, file.name)
  form.append('@jsonPayload', JSON.stringify(json))
  return { form }
}

async function save (table, mode, record, values, files) {
  const base = `/table/${encodeURIComponent(table.name)}`
  let path
  let json
  let query
  if (mode === 'create') {
    path = `${base}/insert`
    json = { values, returning: '*' }
  } else if (table.uid !== undefined) {
    path = `${base}/edit/${encodeURIComponent(String(record[table.uid.name]))}`
    json = values
    query = { returning: '*' }
  } else {
    path = `${base}/update`
    json = { where: whereRow(table, record), setValues: values, returning: '*' }
  }
  const { form } = body(json, files)
  const answer = form ? await api.postForm(path, form, query) : await api.post(path, json, { query })
  return Array.isArray(answer) ? answer[0] : answer
}

function messagesOf (detail) {
  if (Array.isArray(detail?._errors)) return detail._errors.map(String)
  if (typeof detail?.message === 'string') return [detail.message]
  if (typeof detail === 'string') return [detail]
  return [JSON.stringify(detail)]
}

/**
 * Opens the form for a new record (`record` undefined) or to edit `record`. `onSaved(record, mode)`
 * runs after the API accepted it; the dialog then closes.
 */
export function openRecordForm ({ table, record, canWrite, onSaved }) {
  const mode = record === undefined ? 'create' : 'edit'
  const fields = mode === 'create' ? table.createFields : table.editFields
  const controls = fields.map((f) => control(f, record, mode))
  const formError = h('div', { class: 'form-error', role: 'alert' })
  const saveButton = h('button', { type: 'submit', class: 'button primary', disabled: !canWrite }, 'Save')
  const cancel = h('button', { type: 'button', class: 'button', onclick: () => close() }, 'Cancel')
  const form = h('form', { class: 'record-form', novalidate: true },
    controls.length === 0 ? h('p', {}, 'This table has no field you can write.') : null,
    controls.map((c) => c.element),
    formError,
    h('div', { class: 'dialog-buttons' }, cancel, saveButton))

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (!canWrite) return
    formError.textContent = ''
    const { values, files, invalid } = collect(controls, mode)
    if (invalid) {
      formError.textContent = 'Fix the fields marked above.'
      controls.find((c) => c.input.getAttribute('aria-invalid') === 'true')?.input.focus()
      return
    }
    if (mode === 'edit' && Object.keys(values).length === 0) {
      close()
      onSaved(record, 'unchanged')
      return
    }
    saveButton.disabled = true
    form.setAttribute('aria-busy', 'true')
    try {
      const saved = await save(table, mode, record, values, files)
      close()
      onSaved(saved ?? record, mode)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.status === 401) return
      showErrors(error)
    } finally {
      saveButton.disabled = !canWrite
      form.removeAttribute('aria-busy')
    }
  })

  function showErrors (error) {
    const others = error.rootMessages()
    let first
    for (const [name, detail] of error.fieldDetails()) {
      const c = controls.find((x) => x.field.name === name)
      if (c === undefined) {
        // A trigger's RAISE is reported under the uid field; its message stands on its own.
        others.push(detail?.code === 'trigger' ? messagesOf(detail).join('; ') : `${name}: ${messagesOf(detail).join('; ')}`)
        continue
      }
      c.setError(messagesOf(detail).join('; '))
      first ??= c
    }
    replace(formError,
      h('strong', {}, error.message),
      first ? ' — see the fields marked above.' : null,
      others.length > 0 ? h('ul', {}, others.map((o) => h('li', {}, o))) : null)
    first?.input.focus()
  }

  const idText = mode === 'edit' && table.uid ? ` ${record[table.uid.name]}` : ''
  const { close } = openDialog({
    title: mode === 'create' ? `New record in ${table.name}` : `Edit record${idText} in ${table.name}`,
    className: 'record-dialog',
    content: form
  })
  return { close }
}
