// The auth extension's hooks on table writes (insert, upsert, update, edit, action steps, sign-up): a
// password is validated, confirmed and hashed before it reaches SQL; a non-admin changing a password must
// give the current one, and only for their own record; a changed password ends the user's other sessions;
// a changed email is no longer verified.
import type { Knex } from 'knex'
import type { WriteHooks, HookContext, UpdateHook } from '../../table/descriptor.js'
import type { SessionStore } from '../stores/sessions.js'
import type { AuthFields } from '../fields.js'
import { fieldsHave, type FieldsWith } from '../table-with.js'
import { errors, addFieldError, type FieldErrors } from '../../errors.js'
import { hashPassword, validatePassword, verifyPassword } from './passwords.js'
import { normalizeEmail } from '../email-address.js'

type Row = Record<string, unknown>

/** Checks the new password (and its confirm field) in `values`; returns the password. */
export function newPassword (fields: FieldsWith<'password'>, values: Row, fieldErrors: FieldErrors): string | undefined {
  const name = fields.password.name
  const password = values[name]
  const problem = validatePassword(password, name)
  if (problem !== undefined) addFieldError(fieldErrors, name, problem)
  if (fields.confirmName !== undefined) {
    // teenybase's messages (zod's for the empty string), which its clients show as they are.
    const confirm = values[fields.confirmName]
    if (typeof confirm !== 'string') addFieldError(fieldErrors, fields.confirmName, `${fields.confirmName} is required`)
    else if (confirm === '') addFieldError(fieldErrors, fields.confirmName, 'Too small: expected string to have >=1 characters')
    else if (confirm !== password) addFieldError(fieldErrors, fields.confirmName, `${name} and ${fields.confirmName} do not match`)
  }
  return problem === undefined && typeof password === 'string' ? password : undefined
}

/** `values` without the confirm/current fields, which are not columns. */
function columnsOnly (fields: AuthFields, values: Row): Row {
  const rest = { ...values }
  if (fields.confirmName !== undefined) delete rest[fields.confirmName]
  if (fields.currentName !== undefined) delete rest[fields.currentName]
  return rest
}

/** The system values that store a new password: the hash, and an empty legacy salt column. */
export async function passwordColumns (fields: FieldsWith<'password'>, password: string): Promise<Row> {
  const system: Row = { [fields.password.name]: await hashPassword(password) }
  // scrypt strings carry their own salt; the teenybase salt column stays for compatibility, empty.
  if (fields.salt !== undefined) system[fields.salt.name] = ''
  return system
}

export function passwordWriteHooks (table: string, fields: AuthFields, sessions: SessionStore): WriteHooks {
  const withPassword = fieldsHave(fields, 'password') ? fields : undefined
  const pw = withPassword?.password.name
  const email = fields.email?.name
  /** The email in `values` as stored (lowercased, trimmed), when one is given. */
  function normalizeEmailIn (values: Row): void {
    const given = email === undefined ? undefined : values[email]
    if (email !== undefined && typeof given === 'string') values[email] = normalizeEmail(given)
  }

  function beforeBatch (ctx: HookContext, rows: Row[]): void {
    // Each password costs a memory-hard hash, done before the rules can look at the row: a batch of
    // them from one anonymous request would buy seconds of server time.
    if (pw !== undefined && !ctx.admin && rows.filter((row) => row[pw] !== undefined && row[pw] !== null).length > 1) {
      throw errors.badRequest('At most one record with a password per request')
    }
  }

  async function beforeInsert (ctx: HookContext, rows: Row[]): Promise<Array<{ values: Row, system: Row }>> {
    beforeBatch(ctx, rows)
    const fieldErrors: FieldErrors = {}
    const prepared = []
    for (const row of rows) {
      const values = columnsOnly(fields, row)
      let system: Row = {}
      if (withPassword !== undefined) {
        const password = newPassword(withPassword, row, fieldErrors)
        delete values[withPassword.password.name]
        if (password !== undefined) system = await passwordColumns(withPassword, password)
      }
      normalizeEmailIn(values)
      prepared.push({ values, system })
    }
    if (Object.keys(fieldErrors).length > 0) throw errors.validation(fieldErrors)
    return prepared
  }

  async function beforeUpdate (ctx: HookContext, row: Row): Promise<UpdateHook> {
    const values = columnsOnly(fields, row)
    normalizeEmailIn(values)
    if (withPassword === undefined || row[withPassword.password.name] === undefined) return { values, system: {} }
    delete values[withPassword.password.name]
    const fieldErrors: FieldErrors = {}
    const password = newPassword(withPassword, row, fieldErrors)
    if (Object.keys(fieldErrors).length > 0 || password === undefined) throw errors.validation(fieldErrors)
    const trusted = ctx.admin || !ctx.applyRules
    // The only record a caller the rules apply to may change the password of: their own.
    const onlyUid = trusted ? undefined : ctx.uid
    // Refused before the new password is hashed: a refusal costs no memory-hard hash.
    if (onlyUid === null) throw errors.forbidden()
    if (onlyUid !== undefined) await checkCurrentPassword(ctx.db, table, withPassword, onlyUid, row)
    const system = await passwordColumns(withPassword, password)
    // The sessions the old password opened end; the caller changing their own keeps the one it uses.
    const after = async (trx: Knex.Transaction, uids: string[]): Promise<void> => {
      for (const uid of uids) await sessions.revokeUser(table, uid, uid === ctx.uid ? ctx.sid ?? undefined : undefined, trx)
    }
    return { values, system, after, onlyUid }
  }

  const verified = fields.verified?.name
  return {
    beforeBatch,
    beforeInsert,
    beforeUpdate,
    notSettable: new Set(pw === undefined ? [] : [pw]),
    hidden: hiddenFromHooks(fields),
    resets: email === undefined || verified === undefined ? [] : [{ when: email, reset: verified, to: false }]
  }
}

/** The password, its salt, confirm and current fields: what a record hook may never read nor write (lib/crud/before-hooks.ts). */
export function hiddenFromHooks (fields: AuthFields): Set<string> {
  return new Set([fields.password?.name, fields.salt?.name, fields.confirmName, fields.currentName].filter((n): n is string => n !== undefined))
}

/** The caller's current password, from `<password><Current>` (required unless the suffix is ''). */
export async function checkCurrentPassword (db: Knex | Knex.Transaction, table: string, fields: FieldsWith<'password'>, uid: string, values: Row): Promise<void> {
  if (fields.currentName === undefined) return
  const current = values[fields.currentName]
  if (typeof current !== 'string' || current === '') {
    // teenybase answers this one with the message itself; the field's `_errors` says it too.
    const required = `${fields.currentName} is required`
    throw errors.validation({ [fields.currentName]: { _errors: [required] } }, [], required)
  }
  const stored = await db(table).where(fields.uid.name, uid).first(fields.password.name, ...(fields.salt ? [fields.salt.name] : []))
  const result = await verifyPassword(current, stored?.[fields.password.name], fields.salt ? stored?.[fields.salt.name] : undefined)
  if (!result.ok) throw errors.badRequest('Invalid current password')
}
