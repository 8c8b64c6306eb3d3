// Schema follows config (decisions D21, D28, D32): runs the migration planner's steps against a database
// and keeps, in the database itself, what was applied — the migrations (`_fastbase_migrations`, one
// row per migration with its SQL) and the schema model they leave (`_fastbase_schema`, one row) —
// so that every instance and the CLI plan from the same place.
//
// Several configs may share one database (one PostgreSQL schema): each is a project, named by its
// config's `appName`, and the record says which project owns which table (`_fastbase_schema` row 2).
// A config plans changes for its own tables only: it never drops a table another project owns, and
// a table both own is released (forgotten) rather than dropped. Destructive steps run only when the
// caller allows them (`allowDestructive`), and an apply that would drop every table the config
// recorded is refused unless `allowDropAll` says so: that config is most likely not the one that
// made the database.
//
// Which config last applied is recorded too (`_fastbase_schema` row 3, decision D98): a fingerprint
// of the schema each config wants, per project, the latest last. A server whose config is an earlier
// one of that list runs an older config than the database has since applied (an instance not yet
// restarted after `fastbase migrate --apply` or a newer deploy): it plans nothing, least of all
// dropping what the newer config made, and says to restart it. Only a start with no instance alive
// (heartbeats, decision D66) takes such a config back: that is an edit reverted on a stopped server. A table that exists without a record
// is adopted only when its columns are the config's; otherwise the start names the differences.
//
// Everything happens in one transaction under the dialect's schema lock: instances starting together
// on one database run one after the other, and the later ones find nothing left to do; a failing
// step leaves no trace, its record included.
import { createHash } from 'node:crypto'
import type { Knex } from 'knex'
import type { DatabaseSettings, TableData } from '../../schemas/config.js'
import type { SchemaDialect } from '../dialects/ddl.js'
import type { DialectName } from '../dialects/types.js'
import { errors } from '../errors.js'
import { errorMessage } from '../thrown.js'
import { planMigrations, type Plan, type Step } from './migration-plan.js'
import { applyEffects, isInternalTable, schemaOf, withSearchFormat } from './schema-model.js'
import { withForeignKeyIndexes } from './foreign-key-indexes.js'

export const MIGRATIONS_TABLE = '_fastbase_migrations'
export const SCHEMA_TABLE = '_fastbase_schema'
export const INITIAL_MIGRATION = '00000_initial_schema'

const NUMBER_DIGITS = 5
/** `_fastbase_schema` rows: the schema model of every table recorded (an array, as before projects), and who owns which. */
const MODEL_ROW = 1
const OWNERS_ROW = 2
/** `_fastbase_schema` row 3: the configs each project applied (fingerprints, the latest last; decision D98). */
const APPLIED_ROW = 3
/** How many configs of one project the record remembers: the oldest are forgotten. */
const CONFIG_HISTORY = 100

/** fastbase's bookkeeping tables, described as config tables so each dialect's DDL creates them. */
const bookkeeping: TableData[] = [
  {
    name: MIGRATIONS_TABLE,
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true },
      { name: 'name', type: 'text', sqlType: 'text', unique: true, notNull: true },
      { name: 'sql', type: 'text', sqlType: 'text', notNull: true },
      { name: 'applied_at', type: 'date', sqlType: 'timestamp', notNull: true, default: { q: 'CURRENT_TIMESTAMP' } }
    ]
  },
  {
    name: SCHEMA_TABLE,
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true },
      // Text, not JSON: trigger bodies may hold a NUL-delimited token PostgreSQL's json types refuse.
      // Row 1: the schema model (an array of tables); row 2: the tables each project owns.
      { name: 'tables', type: 'text', sqlType: 'text', notNull: true }
    ]
  }
]

/** The project a config's tables belong to in a shared database: its `appName` ('' when unset). */
export function projectOf (config: Pick<DatabaseSettings, 'appName'>): string {
  return config.appName ?? ''
}

export interface MigrationLog {
  info(details: object, message: string): void
  warn(details: object, message: string): void
}

/** A database to migrate: its Knex instance, its DDL, and the planner's name for its dialect. */
export interface MigrationDatabase {
  knex: Knex
  ddl: SchemaDialect
  dialect: DialectName
  log: MigrationLog
}

export interface AppliedMigration { name: string, sql: string, applied_at: string }

export interface PendingMigration {
  name: string
  table: string
  /** Drops data or may fail on existing rows: runs only on an apply that allows destructive steps. */
  destructive: boolean
  reason?: string
  /** Pending steps this one needs first. */
  waitsFor?: string[]
  sql: string
}

/**
 * - `start`: the whole schema on an empty database; later, the safe steps (unless `autoMigrate` is false).
 * - `setup`: as `start`, and tables that went missing are created even when `autoMigrate` is false.
 * - `apply`: every pending safe step, and the destructive ones when `allowDestructive`.
 * - `dry-run`: nothing; `pending` is every step an apply could run.
 */
export type MigrateMode = 'start' | 'setup' | 'apply' | 'dry-run'

export interface MigrateOptions {
  mode: MigrateMode
  /** Config `autoMigrate` (default true). */
  autoMigrate?: boolean
  /** The config's project (its `appName`; '' for none): which recorded tables are its own. */
  project?: string
  /** `apply` only: run the destructive steps too (the user named them). */
  allowDestructive?: boolean
  /** `apply` only: run even a plan that drops every table the config recorded. */
  allowDropAll?: boolean
  /** `apply` only: plan even from a config older than the one last applied (a deliberate roll-back; decision D98). */
  allowOlderConfig?: boolean
  /** `start` only: whether an instance runs on the database (its heartbeat); without one an older config is a revert (decision D98). */
  instancesAlive?: (db: Knex.Transaction) => Promise<boolean>
}

/** This config is an earlier one than the database last applied for its project (decision D98). */
export interface OutdatedConfig {
  /** When the newer config was applied (ISO 8601). */
  newerAppliedAt: string
}

export interface MigrateResult {
  /** Migrations recorded by this run, in order. */
  applied: AppliedMigration[]
  /** Steps left for an explicit apply (all of them for a dry run). */
  pending: PendingMigration[]
  /** Tables this run created (fastbase's bookkeeping tables included), in order. */
  created: string[]
  /** The plan drops every table the config recorded and keeps none (see `Plan.dropsEveryTable`). */
  dropsEveryTable?: string[]
  /** Set when the config is older than the one last applied: nothing was planned or applied. */
  outdated?: OutdatedConfig
}

export interface MigrationStatus {
  /** Every recorded migration, the initial schema first. */
  migrations: AppliedMigration[]
  pending: PendingMigration[]
  dropsEveryTable?: string[]
  /** Set when the config is older than the one last applied: nothing is planned (`pending` is empty). */
  outdated?: OutdatedConfig
}

function sqlText (statements: string[]): string {
  return statements.map((s) => `${s};\n`).join('')
}

function pendingOf (step: Step, waitsFor: string[] = []): PendingMigration {
  return {
    name: step.name,
    table: step.table,
    destructive: step.destructive,
    ...(step.reason !== undefined ? { reason: step.reason } : {}),
    ...(waitsFor.length > 0 ? { waitsFor } : {}),
    sql: sqlText(step.sql)
  }
}

/** ISO 8601 in UTC, whatever the driver returned (PostgreSQL: Date; SQLite: text in UTC). */
function isoTime (value: unknown): string {
  if (value instanceof Date) return value.toISOString()
  const text = String(value)
  const date = new Date(/^\d{4}-\d\d-\d\d \d/.test(text) && !/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? `${text.replace(' ', 'T')}Z` : text)
  return Number.isNaN(date.getTime()) ? text : date.toISOString()
}

function numberOf (name: string): number {
  const n = Number.parseInt(name.slice(0, NUMBER_DIGITS), 10)
  return Number.isNaN(n) ? -1 : n
}

async function run (trx: Knex.Transaction | Knex, statements: string[]): Promise<void> {
  for (const sql of statements) await trx.raw(sql)
}

async function tableNames (db: Knex.Transaction | Knex, ddl: SchemaDialect): Promise<Set<string>> {
  const result = await db.raw(ddl.tablesSql)
  const rows = (Array.isArray(result) ? result : result.rows) as Array<{ name: string }>
  return new Set(rows.map((r) => r.name))
}

async function recordedMigrations (db: Knex.Transaction | Knex): Promise<AppliedMigration[]> {
  const rows = await db(MIGRATIONS_TABLE).select('name', 'sql', 'applied_at').orderBy('id')
  return rows.map((r: { name: string, sql: string, applied_at: unknown }) => ({ name: r.name, sql: r.sql, applied_at: isoTime(r.applied_at) }))
}

/** A `_fastbase_schema` row's JSON, typed where it is read: JSON.parse answers `any` (decision D75). */
function parseRow<T> (text: string): T {
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`${SCHEMA_TABLE} holds no valid schema model; restore it from a backup or delete its rows to record the tables as they are`)
  }
}

/** The configs each project applied: fingerprints (`configFingerprint`), the latest last, and when that one was. */
type AppliedConfigs = { [project: string]: { configs: string[], at: string } }

/** What `_fastbase_schema` holds: the model of every recorded table, which project owns which, and which configs applied. */
interface SchemaRecord {
  model: TableData[] | undefined
  /** Undefined for a database recorded before projects: its tables are the first config's to run. */
  owners: { [project: string]: string[] } | undefined
  /** Undefined for a database recorded before configs were (decision D98): no config is older. */
  applied: AppliedConfigs | undefined
}

async function readRecord (db: Knex.Transaction | Knex, existing: Set<string>): Promise<SchemaRecord> {
  if (!existing.has(SCHEMA_TABLE)) return { model: undefined, owners: undefined, applied: undefined }
  const rows = await db<{ id: number | string, tables: string }>(SCHEMA_TABLE).whereIn('id', [MODEL_ROW, OWNERS_ROW, APPLIED_ROW]).select('id', 'tables')
  const text = (id: number): string | undefined => rows.find((r) => Number(r.id) === id)?.tables
  const model = text(MODEL_ROW)
  const owners = text(OWNERS_ROW)
  const applied = text(APPLIED_ROW)
  return {
    model: model === undefined ? undefined : parseRow<TableData[]>(model),
    owners: owners === undefined ? undefined : parseRow<SchemaRecord['owners']>(owners),
    applied: applied === undefined ? undefined : parseRow<AppliedConfigs>(applied)
  }
}

/**
 * What identifies a config's schema: a digest of the tables it wants as this code makes them (rules,
 * actions and secrets are not part of it). Two instances of one config on one dialect agree.
 */
export function configFingerprint (tables: TableData[], ddl: SchemaDialect): string {
  return createHash('sha256').update(JSON.stringify(asMade(tables, ddl))).digest('base64url').slice(0, 22)
}

/** Set when `mine` is an earlier config of the project than the one it last applied (decision D98). */
function outdatedConfig (applied: AppliedConfigs | undefined, project: string, mine: string): OutdatedConfig | undefined {
  const entry = applied?.[project]
  if (entry === undefined || entry.configs.at(-1) === mine || !entry.configs.includes(mine)) return undefined
  return { newerAppliedAt: entry.at }
}

/** The record of applied configs with `mine` the project's latest (unchanged when it already is). */
function withLatestConfig (applied: AppliedConfigs | undefined, project: string, mine: string): AppliedConfigs {
  const entry = applied?.[project]
  if (entry !== undefined && entry.configs.at(-1) === mine) return applied ?? {}
  const configs = [...(entry?.configs ?? []).filter((c) => c !== mine), mine].slice(-CONFIG_HISTORY)
  return { ...applied, [project]: { configs, at: new Date().toISOString() } }
}

/** What a server whose config is older is told (the start's log, the refusal of an apply, the CLI). */
export function outdatedMessage (outdated: OutdatedConfig): string {
  return `this config is older than the one the database last applied (at ${outdated.newerAppliedAt}): nothing is planned, so nothing the newer config made is dropped. ` +
    'Restart this server with the new config; to go back to this config on purpose, run `fastbase migrate --apply --allow-older-config` with it'
}

/** The part of the record a project plans from: fastbase's own tables and its own. */
interface ProjectView {
  own: TableData[] | undefined
  /** Recorded tables the project must leave in the record for others (their owners plan them). */
  others: TableData[]
  /** Tables another project owns too. */
  shared: Set<string>
}

function projectView (record: SchemaRecord, project: string): ProjectView {
  if (record.model === undefined) return { own: undefined, others: [], shared: new Set() }
  if (record.owners === undefined) return { own: record.model, others: [], shared: new Set() }
  const mine = new Set(record.owners[project] ?? [])
  const shared = new Set(Object.entries(record.owners).flatMap(([name, tables]) => (name === project ? [] : tables)))
  return {
    own: record.model.filter((t) => isInternalTable(t.name) || mine.has(t.name)),
    others: record.model.filter((t) => !isInternalTable(t.name) && (shared.has(t.name) || !mine.has(t.name))),
    shared
  }
}

interface Baseline {
  /** The schema the database holds, or undefined for a database fastbase never set up. */
  model: TableData[] | undefined
  /** The tables the config wants, with fastbase's own tables the config no longer needs kept. */
  target: TableData[]
  /** What differs from the record, for the log. */
  notes: { adopted: string[], missing: string[] }
}

/**
 * The recorded model, reconciled with the tables that exist: a recorded table that is gone is
 * planned anew (someone dropped it), and a table the config wants that exists without a record
 * (a database from before the model was kept, or made by hand) is taken as it is.
 */
function baseline (recorded: TableData[] | undefined, hasHistory: boolean, existing: Set<string>, wanted: TableData[], othersRecorded: boolean): Baseline {
  const wantedNames = new Set(wanted.map((t) => t.name))
  const kept = (recorded ?? []).filter((t) => existing.has(t.name))
  const missing = (recorded ?? []).filter((t) => !existing.has(t.name)).map((t) => t.name)
  const known = new Set(kept.map((t) => t.name))
  const renamedFrom = new Set(wanted.flatMap((t) => (t.lastName !== undefined && known.has(t.lastName) ? [t.name] : [])))
  const adopted = wanted.filter((t) => existing.has(t.name) && !known.has(t.name) && !renamedFrom.has(t.name))
  const model = recorded === undefined && !hasHistory && !othersRecorded && adopted.length === 0 ? undefined : [...kept, ...adopted.map(schemaOf)]
  // fastbase's own tables stay once made (the rate-limit counters outlive `rateLimit: false`).
  const target = [...wanted, ...kept.filter((t) => isInternalTable(t.name) && !wantedNames.has(t.name))]
  return { model, target, notes: { adopted: adopted.map((t) => t.name), missing } }
}

function logNotes (log: MigrationLog, notes: Baseline['notes']): void {
  if (notes.adopted.length > 0) log.info({ tables: notes.adopted }, 'database schema: existing tables recorded as they are')
  if (notes.missing.length > 0) log.warn({ tables: notes.missing }, 'database schema: recorded tables are missing and will be created again')
}

/** Which steps of `steps` this mode runs; the others, with what they wait for. */
function select (steps: Step[], options: MigrateOptions): { run: Step[], waiting: Array<{ step: Step, waitsFor: string[] }> } {
  const { mode } = options
  const autoMigrate = options.autoMigrate ?? true
  const runs: Step[] = []
  const waiting: Array<{ step: Step, waitsFor: string[] }> = []
  const held = new Set<string>()
  for (const step of steps) {
    const waitsFor = (step.requires ?? []).filter((name) => held.has(name))
    const safe = !step.destructive || (mode === 'apply' && options.allowDestructive === true)
    const allowed = safe && waitsFor.length === 0 && (mode === 'apply' ||
      ((mode === 'start' || mode === 'setup') && (autoMigrate || (mode === 'setup' && step.kind === 'create_table'))))
    if (allowed) runs.push(step)
    else {
      held.add(step.name)
      waiting.push({ step, waitsFor })
    }
  }
  return { run: runs, waiting }
}

/** The config's tables as this code made them: shape, and the layout of their search index (decision D71). */
function asMade (target: TableData[], ddl: SchemaDialect): TableData[] {
  return target.map((t) => withSearchFormat(schemaOf(t), ddl.migration.searchFormat))
}

/** The record's model with this project's tables as `current`, each project's tables, and `config` (a fingerprint) as the project's latest when given. */
function nextRecord (view: ProjectView, record: SchemaRecord, project: string, current: TableData[], config: string | undefined): SchemaRecord {
  const names = new Set(current.map((t) => t.name))
  const owners = { ...(record.owners ?? {}), [project]: current.filter((t) => !isInternalTable(t.name)).map((t) => t.name) }
  const applied = config === undefined ? record.applied : withLatestConfig(record.applied, project, config)
  return { model: [...view.others.filter((t) => !names.has(t.name)), ...current].map(schemaOf), owners, applied }
}

async function plan (db: Knex.Transaction | Knex, dialect: DialectName, tables: TableData[], project: string, existing: Set<string>, history: AppliedMigration[]): Promise<{ record: SchemaRecord, view: ProjectView, base: Baseline, plan: Plan }> {
  const record = await readRecord(db, existing)
  const view = projectView(record, project)
  const base = baseline(view.own, history.length > 0, existing, withForeignKeyIndexes(tables), view.others.length > 0)
  const steps = planMigrations(base.model === undefined ? undefined : { tables: base.model }, { tables: base.target }, dialect, { shared: view.shared })
  return { record, view, base, plan: steps }
}

/**
 * Brings the database to `tables` (the config's tables and fastbase's internal ones) as far as
 * `options.mode` allows.
 */
export async function migrate (db: MigrationDatabase, tables: TableData[], options: MigrateOptions): Promise<MigrateResult> {
  const { knex, ddl, dialect, log } = db
  const work = async (trx: Knex.Transaction): Promise<MigrateResult> => {
    await run(trx, ddl.schemaLock())
    let existing = await tableNames(trx, ddl)
    const created: string[] = []
    for (const table of bookkeeping) {
      if (existing.has(table.name)) continue
      if (options.mode === 'dry-run') continue
      await run(trx, ddl.createTable(table, []))
      created.push(table.name)
    }
    if (created.length > 0) existing = await tableNames(trx, ddl)
    if (options.mode !== 'dry-run') await run(trx, ddl.functions)
    const history = existing.has(MIGRATIONS_TABLE) ? await recordedMigrations(trx) : []
    const project = options.project ?? ''
    const { record, view, base: { model, target, notes }, plan: planned } = await plan(trx, dialect, tables, project, existing, history)
    const mine = configFingerprint(tables, ddl)
    const older = options.allowOlderConfig === true ? undefined : outdatedConfig(record.applied, project, mine)
    // A start with no instance alive is a revert (A, B, then A again), not an older server beside a
    // newer one: it plans as an edit would, and the newer config's drops still wait for an explicit apply.
    const reverted = older !== undefined && options.mode === 'start' && options.instancesAlive !== undefined && !await options.instancesAlive(trx)
    if (reverted) log.info({ newerAppliedAt: older.newerAppliedAt }, 'database schema: this config was applied before a newer one and no instance runs: it is applied again (a revert)')
    const outdated = reverted ? undefined : older
    if (outdated !== undefined) {
      if (options.mode === 'apply') throw errors.configOutdated(outdatedMessage(outdated))
      if (options.mode !== 'dry-run') log.warn({ newerAppliedAt: outdated.newerAppliedAt }, `database schema: ${outdatedMessage(outdated)}`)
      return { applied: [], pending: [], created, outdated }
    }
    await refuseOtherShapes(trx, notes.adopted, tables)
    logNotes(log, notes)
    const dropsEveryTable = planned.dropsEveryTable
    const refusal = dropsEveryTable === undefined ? {} : { dropsEveryTable }
    // The wrong config (see below) is not recorded as the latest: the right one's servers would count as older.
    const recorded = dropsEveryTable === undefined || options.allowDropAll === true ? mine : undefined

    if (options.mode === 'dry-run') return { applied: [], pending: planned.steps.map((s) => pendingOf(s)), created: [], ...refusal }
    if (dropsEveryTable !== undefined && options.mode === 'apply' && options.allowDropAll !== true) throw errors.migrationRefused(dropsEveryTableMessage(dropsEveryTable), dropsEveryTable)
    // On start, such a plan changes nothing at all: its safe steps (the wrong config's tables) would
    // only hide from the next look that this config shares no table with the database.
    if (dropsEveryTable !== undefined) log.warn({ tables: dropsEveryTable }, `database schema: nothing applied: ${dropsEveryTableMessage(dropsEveryTable)}`)

    // A database fastbase never set up gets the whole schema as one migration, whatever the mode.
    if (model === undefined) {
      const statements = planned.steps.flatMap((s) => s.sql)
      await run(trx, statements)
      const migration = await insertRecord(trx, INITIAL_MIGRATION, statements)
      await saveRecord(trx, nextRecord(view, record, project, asMade(target, ddl), recorded), record)
      const result = { applied: [migration], pending: [], created: [...created, ...planned.steps.map((s) => s.table)] }
      log.info({ created: result.created }, 'database schema: created')
      return result
    }

    const { run: runs, waiting } = dropsEveryTable !== undefined && options.allowDropAll !== true
      ? { run: [], waiting: planned.steps.map((step) => ({ step, waitsFor: [] })) }
      : select(planned.steps, options)
    let next = Math.max(-1, ...history.map((m) => numberOf(m.name))) + 1
    let current = model
    const applied: AppliedMigration[] = []
    for (const step of runs) {
      const name = `${String(next++).padStart(NUMBER_DIGITS, '0')}_${step.name}`
      await runStep(trx, name, step)
      applied.push(await insertRecord(trx, name, step.sql))
      current = applyEffects(current, step.effects)
      if (step.kind === 'create_table') created.push(step.table)
    }
    // Once nothing waits, the model is the config's exactly (attributes no step looks at included).
    if (waiting.length === 0) current = asMade(target, ddl)
    // Written only when it changed: a start with nothing to do writes nothing.
    await saveRecord(trx, nextRecord(view, record, project, current, recorded), record)
    const pending = waiting.map(({ step, waitsFor }) => pendingOf(step, waitsFor))
    if (applied.length > 0) log.info({ migrations: applied.map((m) => m.name) }, 'database schema: migrations applied')
    if (pending.length > 0) {
      log.warn({ pending: pending.map((p) => ({ name: p.name, ...(p.reason !== undefined ? { reason: p.reason } : {}) })) },
        'database schema: changes wait for an explicit apply that allows destructive steps (`fastbase migrate --apply --allow-destructive`, or POST /api/v1/migrations {"allowDestructive": true})')
    }
    return { applied, pending, created, ...refusal }
  }
  return await knex.transaction(work, ddl.schemaChangeTransaction)
}

/** Why an apply that drops every table is refused, and what to do. */
export function dropsEveryTableMessage (tables: string[]): string {
  return `the config would drop every table it recorded (${tables.join(', ')}) and keep none: it is probably not the config that made this database. ` +
    'Check which config and database were used (FASTBASE_CONFIG, DATABASE_URL, .env); to drop them anyway, apply with allowDropAll (`fastbase migrate --apply --allow-destructive --allow-drop-all`)'
}

async function runStep (trx: Knex.Transaction, name: string, step: Step): Promise<void> {
  try {
    for (const sql of step.sql) {
      const result = await trx.raw(sql)
      // SQLite's table rebuild ends with this check: rows are references the new table breaks.
      if (sql === 'PRAGMA foreign_key_check' && Array.isArray(result) && result.length > 0) {
        throw new Error(`${result.length} row(s) would reference a missing row (first: table ${String(result[0].table)}, rowid ${String(result[0].rowid)})`)
      }
    }
  } catch (err) {
    throw errors.migrationFailed(name, errorMessage(err))
  }
}

async function insertRecord (trx: Knex.Transaction, name: string, statements: string[]): Promise<AppliedMigration> {
  const appliedAt = new Date().toISOString()
  const sql = sqlText(statements)
  await trx(MIGRATIONS_TABLE).insert({ name, sql, applied_at: appliedAt })
  return { name, sql, applied_at: appliedAt }
}

async function saveRecord (trx: Knex.Transaction, next: SchemaRecord, previous: SchemaRecord): Promise<void> {
  const rows: Array<{ id: number, text: string, before: unknown }> = [
    { id: MODEL_ROW, text: JSON.stringify(next.model), before: previous.model },
    { id: OWNERS_ROW, text: JSON.stringify(next.owners), before: previous.owners },
    { id: APPLIED_ROW, text: JSON.stringify(next.applied), before: previous.applied }
  ]
  for (const row of rows) {
    if (next.applied === undefined && row.id === APPLIED_ROW) continue
    if (row.before !== undefined && JSON.stringify(row.before) === row.text) continue
    await trx(SCHEMA_TABLE).insert({ id: row.id, tables: row.text }).onConflict('id').merge(['tables'])
  }
}

/** Recorded migrations and what is pending, read without locking or changing anything. */
export async function migrationStatus (db: MigrationDatabase, tables: TableData[], project = ''): Promise<MigrationStatus> {
  const { knex, ddl, dialect } = db
  const existing = await tableNames(knex, ddl)
  const migrations = existing.has(MIGRATIONS_TABLE) ? await recordedMigrations(knex) : []
  const { record, plan: planned } = await plan(knex, dialect, tables, project, existing, migrations)
  const outdated = outdatedConfig(record.applied, project, configFingerprint(tables, db.ddl))
  if (outdated !== undefined) return { migrations, pending: [], outdated }
  const pending = planned.steps.map((s) => pendingOf(s, (s.requires ?? []).filter((r) => planned.steps.some((p) => p.name === r))))
  return { migrations, pending, ...(planned.dropsEveryTable !== undefined ? { dropsEveryTable: planned.dropsEveryTable } : {}) }
}

/**
 * Tables that exist without a record and are about to be adopted as they are: each must have the
 * columns the config names and no others, or the start stops naming the differences (a data folder
 * or database of another project, say), rather than fail later on the first insert.
 */
async function refuseOtherShapes (trx: Knex.Transaction, adopted: string[], tables: TableData[]): Promise<void> {
  const problems: string[] = []
  for (const name of adopted) {
    const wanted = tables.find((t) => t.name === name)?.fields.map((f) => f.name) ?? []
    const live = Object.keys(await trx(name).columnInfo())
    const missing = wanted.filter((c) => !live.includes(c))
    // fastbase's own columns (PostgreSQL's stored search vector) are made with the table, not named by the config.
    const extra = live.filter((c) => !wanted.includes(c) && !isInternalTable(c))
    if (missing.length === 0 && extra.length === 0) continue
    problems.push(`${name} (${[
      ...(missing.length > 0 ? [`lacks ${missing.join(', ')}`] : []),
      ...(extra.length > 0 ? [`has ${extra.join(', ')}, which the config does not name`] : [])
    ].join('; ')})`)
  }
  if (problems.length > 0) throw errors.schemaMismatch(problems)
}
