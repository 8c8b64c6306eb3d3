// Constraint violations -> 400 with the field they concern (decision D9).
import type { Knex } from 'knex'
import { FastbaseError, errors } from '../errors.js'
import type { ConstraintKind, Dialect } from '../dialects/types.js'
import type { CrudContext } from './context.js'

const MESSAGES: Record<ConstraintKind, string> = {
  unique: 'A record with this value already exists.',
  not_null: 'This field cannot be null.',
  foreign_key: 'The referenced record does not exist.',
  check: 'The value does not satisfy the field\'s check.',
  trigger: 'The write was refused by a trigger.'
}

type Row = Record<string, unknown>

/** The 400 of a constraint violation, under the field it concerns. */
export function constraintError (kind: ConstraintKind, key: string, message = MESSAGES[kind]): FastbaseError {
  return errors.constraint('Constraint violation', { [key]: { code: kind, message } })
}

/** A unique-constraint violation, as the driver raised it or as translateDbError made it. */
export function isUniqueViolation (ctx: Pick<CrudContext, 'dialect' | 'table'>, error: unknown): boolean {
  if (error instanceof FastbaseError) {
    return error.errorCode === 'FB_ERR_CONSTRAINT' && Object.values(error.data ?? {}).some((d) => typeof d === 'object' && d !== null && 'code' in d && d.code === 'unique')
  }
  return ctx.dialect.constraintViolation(error, ctx.table.data)?.kind === 'unique'
}

export async function translateDbError (ctx: CrudContext, error: unknown, written: Row[]): Promise<unknown> {
  if (error instanceof FastbaseError) return error
  const violation = ctx.dialect.constraintViolation(error, ctx.table.data)
  if (violation !== undefined) {
    const column = violation.column ?? (violation.kind === 'foreign_key' ? await missingReference(ctx, written) : undefined)
    const key = column ?? ctx.table.key[0]?.name ?? ctx.table.name
    const message = violation.message ?? (column === undefined && violation.kind === 'foreign_key' ? 'The record is referenced by or references another record.' : MESSAGES[violation.kind])
    return constraintError(violation.kind, key, message)
  }
  // Busy and bad-input errors are not table-specific: plugins/errors.ts maps them.
  return error
}

/** SQLite does not say which foreign key failed: find the written reference whose target row is missing. */
async function missingReference (ctx: CrudContext, written: Row[]): Promise<string | undefined> {
  const db = ctx.db
  const referencing = ctx.table.fieldList.filter((f) => f.foreignKey !== undefined && written.some((row) => row[f.name] !== undefined && row[f.name] !== null))
  if (referencing.length === 1) return referencing[0].name
  for (const field of referencing) {
    const fk = field.foreignKey
    if (fk === undefined) continue
    for (const row of written) {
      const value = row[field.name]
      if (value === undefined || value === null) continue
      const target = await db.from(fk.table).where(fk.column, value as Knex.Value).first().catch(() => undefined)
      if (target === undefined) return field.name
    }
  }
  return undefined
}

/**
 * Database errors any operation can meet, whatever the table: a lock outlasting the busy timeout, a
 * statement past its timeout, a caller's value the database refused. Undefined for anything else.
 */
export function databaseError (dialect: Dialect, error: unknown): FastbaseError | undefined {
  if (dialect.isBusy(error)) return errors.busy()
  if (dialect.isTimeout(error)) return errors.statementTimeout()
  const bad = dialect.badInput(error)
  return bad === undefined ? undefined : errors.badRequest(`Invalid value in query: ${bad}`)
}
