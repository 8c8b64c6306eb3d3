// What the panel knows of a table, read from GET /settings (the config's `tables`, secrets redacted).

const SERVER_SET = new Set(['record_created', 'record_updated', 'auth_password_salt'])

/** The config's tables, by name, with what the views need. */
export function tablesOf (settings) {
  const tables = new Map()
  for (const data of Array.isArray(settings?.tables) ? settings.tables : []) {
    if (typeof data?.name !== 'string') continue
    tables.set(data.name, tableInfo(data))
  }
  return tables
}

/**
 * With the auth extension's `passwordConfirmSuffix`, a password write needs `<password><suffix>` too
 * (lib/auth/passwords/password-writes.ts): forms get that input right after the password's.
 */
function withConfirm (fields, data) {
  const auth = (Array.isArray(data.extensions) ? data.extensions : []).find((e) => e?.name === 'auth')
  const password = fields.find((f) => f.usage === 'auth_password')
  if (!auth?.passwordConfirmSuffix || password === undefined) return fields
  const confirm = { name: `${password.name}${auth.passwordConfirmSuffix}`, type: 'password', confirms: password.name }
  const at = fields.indexOf(password) + 1
  return [...fields.slice(0, at), confirm, ...fields.slice(at)]
}

function tableInfo (data) {
  const fields = Array.isArray(data.fields) ? data.fields.filter((f) => typeof f?.name === 'string') : []
  const uid = fields.find((f) => f.usage === 'record_uid')
  const primary = fields.filter((f) => f.primary === true)
  // The server's key (lib/table/descriptor.ts): the primary key, else the uid field.
  const key = primary.length > 0 ? primary : uid !== undefined ? [uid] : []
  return {
    name: data.name,
    fields,
    uid,
    key,
    /** Fields a create form offers: not noInsert, not set by the server, not generated. */
    createFields: withConfirm(fields.filter((f) => f.noInsert !== true && !SERVER_SET.has(f.usage) && f.type !== 'blob' &&
      f.autoIncrement !== true && !(f === uid && data.autoSetUid === true)), data),
    /** Fields an edit form offers: also not noUpdate, and never the row's identity. */
    editFields: withConfirm(fields.filter((f) => f.noUpdate !== true && !SERVER_SET.has(f.usage) && f.type !== 'blob' && f !== uid && f.primary !== true), data)
  }
}

/** A field whose value is a password (hashed by the server, never shown). */
export function isPassword (field) {
  return field.usage === 'auth_password' || field.type === 'password'
}

/** A literal of the expression language: numbers as they are, strings single-quoted and escaped. */
export function literal (value) {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null) return 'null'
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** A where expression naming exactly `row` by the table's key; null when the table has none. */
export function whereRow (table, row) {
  if (table.key.length === 0) return null
  return table.key.map((f) => `${f.name} == ${literal(row[f.name])}`).join(' & ')
}

/** The default a create form starts from for a bool field (`default: { l: true }`). */
export function literalDefault (field) {
  const d = field.default
  if (d !== null && typeof d === 'object' && 'l' in d) return d.l
  return undefined
}

/** An action's params as `[{ name, type, optional, default, description }]`. */
export function paramsOf (action) {
  return Object.entries(action?.params ?? {}).map(([name, p]) => {
    const def = typeof p === 'string' ? { type: p } : (p ?? {})
    return { name, type: def.type ?? 'string', optional: def.optional === true, default: def.default, description: def.description }
  })
}
