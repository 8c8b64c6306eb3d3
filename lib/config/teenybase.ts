// Keys teenybase configs carry that fastbase's schema does not: each is either put to use (mapped
// onto the fastbase key that means the same) or dropped with one start-up warning that names it
// (decision D35). Runs on the plain copy of the config, before schema validation, so what is left
// is validated strictly: a key neither knows is an error with "did you mean".
import { formatPath } from './paths.js'
import { isObject as isPlain } from '../plain.js'

type Plain = Record<string, unknown>

export interface Adaptation {
  /** One line per key dropped or not fully used, for the start-up log. */
  warnings: string[]
  /** Keys teenybase would accept but whose value cannot be used (and would change behaviour if ignored). */
  problems: string[]
}

/** The auth extension's legacy column keys -> the field `usage` fastbase finds columns by. */
const LEGACY_AUTH_FIELDS: Record<string, string> = {
  usernameField: 'auth_username',
  emailField: 'auth_email',
  emailVerifiedField: 'auth_email_verified',
  passwordField: 'auth_password',
  passwordSaltField: 'auth_password_salt',
  nameField: 'auth_name',
  avatarField: 'auth_avatar',
  metadataField: 'auth_metadata',
  audFields: 'auth_audience'
}

/** Top-level and `email` keys teenybase reads that have no meaning here, with what to do instead. */
const IGNORED_TOP: Record<string, string> = {
  procedures: 'fastbase has no procedures; named server-side statements are `actions`',
  auth: 'auth routes exist for each table with an auth extension'
}
const IGNORED_EMAIL: Record<string, string> = {
  mailgun: 'fastbase sends mail over SMTP: set `email.smtp` or SMTP_URL',
  resend: 'fastbase sends mail over SMTP: set `email.smtp` or SMTP_URL (Resend offers SMTP)',
  mock: 'without an SMTP transport fastbase already logs each email instead of sending it'
}

/** Rewrites `config` (a private copy) in place. */
export function adaptTeenybaseKeys (config: unknown): Adaptation {
  const out: Adaptation = { warnings: [], problems: [] }
  if (!isPlain(config)) return out
  dropIgnored(config, IGNORED_TOP, [], out)
  if (isPlain(config.email)) dropIgnored(config.email, IGNORED_EMAIL, ['email'], out)
  const tables = Array.isArray(config.tables) ? config.tables : []
  tables.forEach((table, t) => {
    if (!isPlain(table) || !Array.isArray(table.extensions)) return
    table.extensions.forEach((extension, e) => {
      if (isPlain(extension) && extension.name === 'auth') adaptAuthExtension(config, table, extension, ['tables', t, 'extensions', e], out)
    })
  })
  const actions = Array.isArray(config.actions) ? config.actions : []
  actions.forEach((action, a) => {
    if (!isPlain(action) || action.sql === undefined) return
    const queries = Array.isArray(action.sql) ? action.sql : [action.sql]
    queries.forEach((query, q) => {
      if (isPlain(query)) adaptSqlQuery(query, ['actions', a, 'sql', ...(Array.isArray(action.sql) ? [q] : [])], out)
    })
  })
  return out
}

function dropIgnored (object: Plain, ignored: Record<string, string>, path: Array<string | number>, out: Adaptation): void {
  for (const [key, instead] of Object.entries(ignored)) {
    if (!Object.hasOwn(object, key)) continue
    delete object[key]
    out.warnings.push(`${formatPath([...path, key])}: a teenybase key fastbase does not use, ignored (${instead})`)
  }
}

function adaptAuthExtension (config: Plain, table: Plain, extension: Plain, path: Array<string | number>, out: Adaptation): void {
  // teenybase read the cookie settings here too; fastbase has one auth cookie for the app.
  if (Object.hasOwn(extension, 'authCookie')) {
    const cookie = extension.authCookie
    delete extension.authCookie
    if (config.authCookie === undefined) {
      config.authCookie = cookie
    } else if (JSON.stringify(config.authCookie) !== JSON.stringify(cookie)) {
      out.warnings.push(`${formatPath([...path, 'authCookie'])}: ignored, the top-level \`authCookie\` is the app's one auth cookie`)
    }
  }
  const fields = Array.isArray(table.fields) ? table.fields.filter(isPlain) : []
  for (const [key, usage] of Object.entries(LEGACY_AUTH_FIELDS)) {
    if (!Object.hasOwn(extension, key)) continue
    const names = extension[key]
    delete extension[key]
    for (const name of Array.isArray(names) ? names : [names]) {
      const where = formatPath([...path, key])
      const field = fields.find((f) => f.name === name)
      if (field === undefined) {
        out.warnings.push(`${where}: names no field of the table (${JSON.stringify(name)}), ignored; fastbase finds auth columns by their \`usage\``)
      } else if (field.usage === undefined) {
        field.usage = usage
      } else if (field.usage !== usage) {
        out.warnings.push(`${where}: ignored, field "${String(name)}" already has usage "${String(field.usage)}"`)
      }
    }
  }
}

/** SQL-mode queries: teenybase's `from` is the table read by a SELECT. */
function adaptSqlQuery (query: Plain, path: Array<string | number>, out: Adaptation): void {
  if (!Object.hasOwn(query, 'from')) return
  const from = query.from
  delete query.from
  const tables = Array.isArray(from) ? from : [from]
  if (tables.length !== 1 || typeof tables[0] !== 'string') {
    out.problems.push(`${formatPath([...path, 'from'])}: must name one table (a query reads one table)`)
  } else if (query.table === undefined) {
    query.table = tables[0]
  } else if (query.table !== tables[0]) {
    out.problems.push(`${formatPath([...path, 'from'])}: names "${tables[0]}" but \`table\` is "${String(query.table)}"`)
  }
}
