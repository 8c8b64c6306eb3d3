// A table's compiled descriptor: built once at start-up from the config, read on every request.
import type { Knex } from 'knex'
import type { TableData, TableField, AuthExtension, RulesExtension } from '../../schemas/config.js'
import type { Dialect } from '../dialects/types.js'
import { parseExpression, type Expr } from '../expr/parse.js'
import { ExpressionError } from '../expr/errors.js'
import { compile } from '../expr/compile.js'
import { expressionHops } from '../expr/relations.js'
import { ANONYMOUS, authGlobals } from '../auth-context.js'
import { ConfigError } from '../errors.js'
import { searchIndexOf, type SearchIndex } from '../search/fts.js'

export const RULE_NAMES = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule'] as const
export type RuleName = typeof RULE_NAMES[number]

export interface TableDescriptor {
  name: string
  /** The table name quoted for SQL. */
  quoted: string
  data: TableData
  fields: Map<string, TableField>
  fieldList: TableField[]
  /** The `record_uid` field: enables view/edit. */
  uid?: TableField
  created?: TableField
  updated?: TableField
  /** Columns that identify a row: the primary key, else the uid field. */
  key: TableField[]
  /** Parsed rules; `null` = admin only (missing rule, or no rules extension: decision D3). */
  rules: Record<RuleName, Expr | null>
  /** Parsed field rules: who may read each field (decision D96). */
  fieldRules: ReadonlyMap<string, Expr>
  hasRulesExtension: boolean
  /** Writes by users need a session with a second factor (rules `mfaForWrites`, decision D117). */
  mfaForWrites: boolean
  auth?: AuthExtension
  /** Fields a caller may see, in config order. */
  visibleFields: (seesHidden: boolean) => TableField[]
  /** The auth extension's hooks on writes (passwords hashed, checked; a changed email unverified), given when the table is described. */
  readonly writeHooks?: WriteHooks
  /** The full-text index `@@` matches (decision D37). */
  search?: SearchIndex
  /** The fields with a `foreignKey`, with the table and column each references (relation expand). */
  foreignKeys: readonly ForeignKey[]
  /** The foreign keys of every table (this one's too) that reference this table. */
  referencedBy: readonly ForeignKey[]
}

/** A field of this table that references a row of `target` by `column`. */
export interface ForeignKey { field: TableField, target: TableDescriptor, column: TableField }

type Row = Record<string, unknown>

/**
 * Rewrites caller values before a write. `system` values are written as given, past noInsert/noUpdate.
 * lib/crud/write.ts calls them on every path that writes (insert, upsert, update, edit, action steps).
 */
export interface WriteHooks {
  /** Refuses a whole insert before any row is prepared (a bound on costly rows). */
  beforeBatch: (ctx: HookContext, rows: Row[]) => void
  beforeInsert: (ctx: HookContext, rows: Row[]) => Promise<Array<{ values: Row, system: Row }>>
  beforeUpdate: (ctx: HookContext, values: Row) => Promise<UpdateHook>
  /** Fields `set` expressions may not write (a password must be hashed). */
  notSettable: Set<string>
  /** Names record hooks never see nor set: the password (plaintext in a write), its salt, its confirm and current fields. */
  hidden: Set<string>
  /** When column `when` is given a different value, column `reset` becomes `to` (a changed email is unverified). */
  resets: Array<{ when: string, reset: string, to: unknown }>
}

/** The write hooks of an auth table (lib/auth/passwords/password-writes.ts), passed in so lib/table needs nothing of lib/auth. */
export type AuthWriteHooks = (table: TableData, auth: AuthExtension) => WriteHooks

export interface UpdateHook {
  values: Row
  system: Row
  /** The update may reach only this record. */
  onlyUid?: string
  /** Runs in the update's transaction with the uids of the rows it changed (ends the sessions of a changed password). */
  after?: (db: Knex.Transaction, uids: string[]) => Promise<void>
}

/** What hooks may know about the caller, and the connection (or transaction) the write runs on. */
export interface HookContext { admin: boolean, uid: string | null, sid: string | null, applyRules: boolean, db: Knex | Knex.Transaction }

/** The fields named `names`, in order; undefined when one of them is not a field of the table. */
export function fieldsNamed (table: TableDescriptor, names: readonly string[]): TableField[] | undefined {
  const fields: TableField[] = []
  for (const name of names) {
    const field = table.fields.get(name)
    if (field === undefined) return undefined
    fields.push(field)
  }
  return fields
}

function byUsage (table: TableData, usage: string): TableField | undefined {
  return table.fields.find((f) => f.usage === usage)
}

/** Parses a rule; problems (syntax, empty rule) are pushed with the rule's config path. */
function parseRule (table: TableData, rule: string, text: string | null | undefined, problems: string[]): Expr | null {
  if (text === null || text === undefined) return null
  if (text.trim() === '') {
    problems.push(`tables.${table.name}.${rule}: empty rule (use 'true' to allow everyone, or null for admins only)`)
    return null
  }
  try {
    return parseExpression(text)
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error
    problems.push(`tables.${table.name}.${rule}: ${error.message}`)
    return null
  }
}

/** The field rules of a table, parsed; a rule on no field of the table is a problem. */
function parseFieldRules (table: TableData, given: Record<string, string> | undefined, problems: string[]): Map<string, Expr> {
  const parsed = new Map<string, Expr>()
  for (const [name, text] of Object.entries(given ?? {})) {
    if (!table.fields.some((f) => f.name === name)) {
      problems.push(`tables.${table.name}.fieldRules.${name}: ${table.name} has no field "${name}"`)
      continue
    }
    const expr = parseRule(table, `fieldRules.${name}`, text, problems)
    if (expr !== null) parsed.set(name, expr)
  }
  return parsed
}

function describeTable (table: TableData, dialect: Dialect, authHooks: AuthWriteHooks | undefined, links: Links, problems: string[]): TableDescriptor {
  const rulesExt = table.extensions?.find((e): e is RulesExtension => e.name === 'rules')
  const rules = Object.fromEntries(RULE_NAMES.map((r) => [r, parseRule(table, r, rulesExt?.[r], problems)])) as Record<RuleName, Expr | null>
  const uid = byUsage(table, 'record_uid')
  const primary = table.fields.filter((f) => f.primary === true)
  const visibleAll = table.fields
  const visiblePublic = table.fields.filter((f) => f.noSelect !== true)
  const auth = table.extensions?.find((e): e is AuthExtension => e.name === 'auth')
  return {
    name: table.name,
    quoted: dialect.quote(table.name),
    data: table,
    fields: new Map(table.fields.map((f) => [f.name, f])),
    fieldList: table.fields,
    uid,
    created: byUsage(table, 'record_created'),
    updated: byUsage(table, 'record_updated'),
    key: primary.length > 0 ? primary : uid !== undefined ? [uid] : [],
    rules,
    fieldRules: parseFieldRules(table, rulesExt?.fieldRules, problems),
    hasRulesExtension: rulesExt !== undefined,
    mfaForWrites: rulesExt?.mfaForWrites === true,
    auth,
    writeHooks: auth === undefined ? undefined : authHooks?.(table, auth),
    visibleFields: (seesHidden) => (seesHidden ? visibleAll : visiblePublic),
    search: searchIndexOf(table),
    foreignKeys: links.foreignKeys,
    referencedBy: links.referencedBy
  }
}

/** A descriptor's foreign keys either way, filled once every table is described. */
interface Links { foreignKeys: ForeignKey[], referencedBy: ForeignKey[] }

/**
 * Links each foreign key field to the descriptor it references (config validation made sure it
 * exists): into the descriptor's `foreignKeys`, and the target's `referencedBy`.
 */
function linkForeignKeys (descriptor: TableDescriptor, all: Map<string, TableDescriptor>, links: Map<TableDescriptor, Links>): void {
  for (const field of descriptor.fieldList) {
    const fk = field.foreignKey
    const target = fk === undefined ? undefined : all.get(fk.table)
    const column = fk === undefined ? undefined : target?.fields.get(fk.column)
    if (target === undefined || column === undefined) continue
    const link = { field, target, column }
    links.get(descriptor)?.foreignKeys.push(link)
    links.get(target)?.referencedBy.push(link)
  }
}

/**
 * Descriptors of every table. Each rule is parsed, then compiled once for an anonymous caller, so an
 * unknown column or function stops start-up instead of failing requests. Throws ConfigError listing every problem.
 * `authHooks` gives each auth table its write hooks (the kernel's, over its session store); without
 * it (tools that only read the schema) an auth table has none.
 */
export function describeTables (tables: TableData[], dialect: Dialect, authHooks?: AuthWriteHooks): Map<string, TableDescriptor> {
  const problems: string[] = []
  const result = new Map<string, TableDescriptor>()
  const links = new Map<TableDescriptor, Links>()
  for (const table of tables) {
    const link: Links = { foreignKeys: [], referencedBy: [] }
    const descriptor = describeTable(table, dialect, authHooks, link, problems)
    result.set(table.name, descriptor)
    links.set(descriptor, link)
  }
  // Rules may follow foreign keys (decision D95): every table is linked before any rule is compiled.
  for (const descriptor of links.keys()) linkForeignKeys(descriptor, result, links)
  for (const descriptor of result.values()) {
    const rules: Array<[string, Expr | null]> = [...RULE_NAMES.map((r): [string, Expr | null] => [r, descriptor.rules[r]]), ...[...descriptor.fieldRules].map(([f, e]): [string, Expr] => [`fieldRules.${f}`, e])]
    for (const [rule, expr] of rules) {
      if (expr === null) continue
      try {
        const newValues = rule === 'createRule' || rule === 'updateRule' ? 'row' as const : undefined
        compile(expr, { dialect, table: descriptor, globals: { auth: authGlobals(ANONYMOUS), request: {}, params: {} }, seesHidden: true, newValues, expressionHops: expressionHops() })
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error
        problems.push(`tables.${descriptor.name}.${rule}: ${error.message}`)
      }
    }
    if (descriptor.rules.createRule !== null && descriptor.key.length === 0) {
      problems.push(`tables.${descriptor.name}.createRule: a create rule needs a primary key or a record_uid field to check inserted rows`)
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)
  // Complete now: nothing changes a descriptor after this (an auth table's hooks came with it).
  for (const descriptor of result.values()) {
    Object.freeze(descriptor.foreignKeys)
    Object.freeze(descriptor)
  }
  return result
}
