// The writes auth flows make to a user row themselves (a verified flag, a password hash, a user
// created by an external sign-in) reported to realtime like any table write (lib/crud/changes-port.ts):
// after the commit, with the row as it was written.
import type { Knex } from 'knex'
import { recordChange, recordUncaptured, type ChangeAction } from '../crud/changes-port.js'
import type { AuthTable, Row, SessionServices } from './types.js'

/** Reports the write of `row` (as read from the database, or its uid to read it) made on `db`. */
export async function reportUserWrite (services: SessionServices, at: AuthTable, db: Knex | Knex.Transaction, action: Extract<ChangeAction, 'insert' | 'update'>, row: Row | string): Promise<void> {
  const sink = services.changes?.()
  const { table } = at
  if (sink === undefined || table.key.length === 0) return
  if (!sink.wants(table.name)) {
    recordUncaptured(sink, db, table.name)
    return
  }
  const raw: Row | undefined = typeof row === 'string' ? await db(table.name).where(at.fields.uid.name, row).first() : row
  if (raw === undefined) return
  const record = Object.fromEntries(table.fieldList.map((f) => [f.name, services.dialect.decode(f, raw[f.name])]))
  recordChange(sink, db, { table: table.name, action, keys: [table.key.map((f) => record[f.name])], rows: [record] })
}
