// select, list and view.
import type { Knex } from 'knex'
import type { Fragment } from '../dialects/types.js'
import { errors } from '../errors.js'
import { rowsFor } from '../limits.js'
import { RANK_CANDIDATES, type SearchRank } from '../search/fts.js'
import { and, applyCondition, followsRelations, ruleCondition, ruleFirst, whereOf, idCondition, idValue, type Condition, type CrudContext } from './context.js'
import { repeatedKey } from './plan-cache.js'
import { fillSlots, readPlan, runFilled, runPlanned, type Carry, type Counted, type ReadPlan, type PlannedStatement, type PlanBuilder } from './read-plans.js'
import { keptTotal } from './total-cache.js'
import { statementReads } from './sql-reads.js'
import { andThen, type MaybePromise } from '../maybe-async.js'
import { outputColumns, selectList, decodeRow, orderSql, groupSql, checkGrouping, checkDistinct, columnWidth, type OutputColumn, type ListSpec } from './columns.js'

export interface ReadParams {
  where?: string
  order?: ListSpec
  sort?: ListSpec
  select?: ListSpec
  group?: ListSpec
  limit?: number
  offset?: number
  distinct?: boolean
  /** list: no count query; `total` is -1 (PocketBase's `skipTotal`). */
  skipTotal?: boolean
  /**
   * list: `total` is the planner's estimate when it is large (PostgREST's `count=estimated`): counted
   * exactly below ESTIMATE_EXACT_BELOW rows, or where the dialect has no estimate (SQLite).
   */
  estimateTotal?: boolean
}

/** Below this many estimated rows an exact count is cheap enough to run. */
export const ESTIMATE_EXACT_BELOW = 10_000

type Row = Record<string, unknown>

interface PlanBase {
  columns: OutputColumn[]
  group?: string
  order?: Fragment
  /** Scores of the rows a search ranks (lib/search/fts.ts RANK_CANDIDATES), joined to the page as `fb_rank`. */
  scores?: { statement: Fragment, rowKey: string }
  /** It searches or expands relations: its statements may take long (Statement#offThread). */
  costly: boolean
  /**
   * It searches (`@@`): the best plan depends on how many rows the words match (read the first rows
   * in key order, or find the few through the index), so PostgreSQL plans it for each run's words
   * instead of reusing one generic plan (decision D71).
   */
  searches: boolean
  /** Its condition requires a search whose index can drive its statements: they read the matches from it. */
  driven?: Driven
}

/** The index's matching rows joined to the table (Dialect#search.drive), and what else the condition asks of them. */
interface Driven { from: Fragment, rest: Fragment | true }

/** A plan whose condition may match rows: the one its queries are built from. */
type MatchingPlan = PlanBase & { condition: Fragment | true }
/** A condition folded to false matches nothing: no query is built. */
type Plan = MatchingPlan | (PlanBase & { condition: false })
type Scores = NonNullable<PlanBase['scores']>

const RANKED = '"fb_rank"'

function planOf (ctx: CrudContext, params: ReadParams): Plan {
  const ranks: SearchRank[] = []
  // Comparisons that follow no relation compile the same either way.
  const semiJoins = ctx.dialect.plansSemiJoins ? { semiJoins: true } as const : {}
  const rule = ruleCondition(ctx, 'listRule', semiJoins)
  const condition = ruleFirst(rule, whereOf(ctx, params.where, { ranks, ...semiJoins }))
  const driven = ranks.length > 0 && condition !== false ? drivenBySearch(ctx, params.where, rule, ranks[0]) : undefined
  const columns = outputColumns(ctx, 'select', params.select)
  checkGrouping(ctx, columns, params.group)
  checkDistinct(columns, params.distinct)
  const group = groupSql(ctx, params.group)
  const searches = ranks.length > 0
  // A search or a relation anywhere in what was compiled, the rule included (decision D85).
  const costly = ctx.budget.costly
  const order = orderSql(ctx, params.order ?? params.sort, columns)
  if (order !== undefined) return { columns, condition, group, costly, searches, driven, order }
  const key = defaultOrder(ctx, params, columns, group)
  // A substring search is not ranked: its matches come in key order (decision D103).
  if (ranks.length === 0 || ranks[0].index.tokenize === 'trigram' || key === undefined || !isKeyOrder(ctx, params, columns, group) || condition === false) return { columns, condition, group, costly, searches, driven, order: key }
  return { columns, condition, group, costly, searches, driven, ...ranked(ctx, ranks[0], condition, key.sql, driven?.rest) }
}

/**
 * A where that requires its first search (with the search false it admits no row) may read its rows
 * from the index (Dialect#search.drive) rather than test each row against the set of every match;
 * `rest` is what the condition asks of a matching row besides.
 */
function drivenBySearch (ctx: CrudContext, where: string | undefined, rule: Condition, rank: SearchRank): Driven | undefined {
  const drive = ctx.dialect.search.drive?.(rank.index, ctx.table.quoted, rank.fields, rank.query)
  // The where's searches were counted against the request's budget when it was first compiled.
  if (drive === undefined || whereOf(ctx, where, { firstSearchAs: { value: false }, budget: undefined }) !== false) return undefined
  const rest = ruleFirst(rule, whereOf(ctx, where, { firstSearchAs: { value: true }, budget: undefined }))
  return rest === false ? undefined : { from: drive, rest }
}

/**
 * Deterministic order on both dialects (decision D8): primary key, else what the rows are made of.
 */
function defaultOrder (ctx: CrudContext, params: ReadParams, columns: OutputColumn[], group?: string): Fragment | undefined {
  const text = (sql: string): Fragment => ({ sql, bindings: [] })
  if (group !== undefined) return text(group)
  if (columns.some((c) => c.aggregate)) return undefined
  // DISTINCT may only order by what it selects.
  if (!isKeyOrder(ctx, params, columns, group)) return text(columns.map((_, i) => String(i + 1)).join(', '))
  return text(ctx.table.key.map((f) => `${ctx.table.quoted}.${ctx.dialect.quote(f.name)}`).join(', '))
}

const isKeyOrder = (ctx: CrudContext, params: ReadParams, columns: OutputColumn[], group?: string): boolean =>
  group === undefined && !columns.some((c) => c.aggregate) && params.distinct !== true && ctx.table.key.length > 0

/**
 * A where that searches (`@@`) puts the best matches of its first search first, as teenybase does.
 * Only the first RANK_CANDIDATES matching rows the caller may see (in key order, or in the index's
 * when it drives the statement: decision D77) are scored, each from its own text: the order never
 * depends on rows or fields the caller cannot see, and ranking costs at most that many rows however
 * many match. The other matches follow in key order.
 */
function ranked (ctx: CrudContext, rank: SearchRank, condition: Fragment | true, key: string, rest: Fragment | true | undefined): Pick<PlanBase, 'order' | 'scores'> {
  const statement = ctx.dialect.search.scores(rank.index, ctx.table.quoted, rank.fields, rank.query, { where: condition, order: key, limit: RANK_CANDIDATES, rest })
  return {
    scores: { statement, rowKey: ctx.dialect.search.rowKey(rank.index, ctx.table.quoted) },
    order: { sql: `${RANKED}."fb_score" DESC NULLS LAST, ${key}`, bindings: [] }
  }
}

/** The rows the plan's condition admits: of the table, or read from the search index that drives it. */
function matchingRows (ctx: CrudContext, p: MatchingPlan): Knex.QueryBuilder {
  if (p.driven === undefined) return applyCondition(ctx.db.from(ctx.table.name), p.condition)
  const { from, rest } = p.driven
  return applyCondition(ctx.db.from(ctx.db.raw(from.sql, from.bindings)), rest)
}

function baseQuery (ctx: CrudContext, p: MatchingPlan, distinct: boolean): Knex.QueryBuilder {
  const list = selectList(ctx.db, ctx, p.columns)
  let query = matchingRows(ctx, p)
  query = distinct ? query.distinct(list) : query.select(list)
  if (p.group !== undefined) query = query.groupByRaw(p.group)
  return query
}

/** Rows of one page: `limit`, capped by maxLimit and by the cells one answer may hold (decisions D7, D38). */
function limitOf (ctx: CrudContext, limit: number | undefined, columns: number): number {
  return Math.min(limit ?? ctx.limits.maxLimit, ctx.limits.maxLimit, rowsFor(ctx.limits, columns))
}

/**
 * The page query. Limit and offset are validated integers written into the text: SQLite re-prepares a
 * statement whose LIMIT is a parameter on every run, and the text is cached per shape anyway.
 */
function pageQuery (ctx: CrudContext, p: MatchingPlan, params: ReadParams): Knex.QueryBuilder {
  const offset = params.offset ?? 0
  if (ctx.table.key.length > 0 && p.columns.some((c) => c.nested !== undefined)) return withScores(ctx, expandedPage(ctx, p, params, offset), p)
  const limit = limitOf(ctx, params.limit, columnWidth(p.columns))
  const candidates = candidatesWithin(p, offset + limit)
  let query = candidates !== undefined
    ? candidatesOnly(ctx.db.from(ctx.table.name).select(selectList(ctx.db, ctx, p.columns)), p, candidates)
    : ordered(joinScores(baseQuery(ctx, p, params.distinct === true), p), p)
  query = query.limit(limit, { skipBinding: true })
  if (offset > 0) query = query.offset(offset, { skipBinding: true })
  return withScores(ctx, query, p)
}

/**
 * A ranked search's candidates come first in its order (lib/search/fts.ts RANK_CANDIDATES): a page that ends
 * within them, or a search whose every match is a candidate, is made of candidates only.
 */
function candidatesWithin (p: PlanBase, end: number): Scores | undefined {
  return end <= RANK_CANDIDATES ? p.scores : undefined
}

/**
 * The candidates in rank order: the rows the scores name, and no other. They were chosen under the
 * condition, so it is not tested again, and no other matching row is read.
 */
function candidatesOnly (query: Knex.QueryBuilder, p: PlanBase, scores: Scores): Knex.QueryBuilder {
  return ordered(query.joinRaw(`JOIN ${RANKED} ON ${RANKED}."fb_row" = ${scores.rowKey}`), p)
}

function ordered (query: Knex.QueryBuilder, p: PlanBase): Knex.QueryBuilder {
  return p.order === undefined ? query : query.orderByRaw(p.order.sql, p.order.bindings)
}

/** The search scores as a materialized CTE of the whole statement: computed once, not once per row. */
function withScores (ctx: CrudContext, query: Knex.QueryBuilder, p: PlanBase): Knex.QueryBuilder {
  return p.scores === undefined ? query : query.withMaterialized('fb_rank', ctx.db.raw(p.scores.statement.sql, p.scores.statement.bindings))
}

/** The scores next to each row, for an order that reads them (any query of the statement may). */
function joinScores (query: Knex.QueryBuilder, p: PlanBase): Knex.QueryBuilder {
  return p.scores === undefined ? query : query.joinRaw(`LEFT JOIN ${RANKED} ON ${RANKED}."fb_row" = ${p.scores.rowKey}`)
}

/**
 * A page whose list expands relations. Databases may compute the select list of rows they do not
 * return: those an OFFSET skips when read in index order (PostgreSQL), those a sort then drops
 * (SQLite), and each would build its objects. The page's keys are chosen first, without the
 * relations, and only the page's rows are expanded (and sorted again, the same way).
 */
function expandedPage (ctx: CrudContext, p: MatchingPlan, params: ReadParams, offset: number): Knex.QueryBuilder {
  const db = ctx.db
  const keys = ctx.table.key.map((f, i) => db.raw(`${ctx.table.quoted}.${ctx.dialect.quote(f.name)} AS ${ctx.dialect.quote(`fb_key_${i}`)}`))
  // The plain columns stay: an order may name their keys.
  const plain = p.columns.filter((c) => c.nested === undefined)
  const limit = limitOf(ctx, params.limit, columnWidth(p.columns))
  const columns = [...keys, ...selectList(db, ctx, plain)]
  const candidates = candidatesWithin(p, offset + limit)
  const page = (candidates !== undefined ? candidatesOnly(db.from(ctx.table.name).select(columns), p, candidates) : ordered(joinScores(matchingRows(ctx, p).select(columns), p), p))
    .limit(limit, { skipBinding: true })
  if (offset > 0) page.offset(offset, { skipBinding: true })
  const pageKeys = db.from(page.as('fb_page')).select(ctx.table.key.map((_, i) => `fb_key_${i}`))
  return ordered(joinScores(db.from(ctx.table.name).select(selectList(db, ctx, p.columns)).whereIn(ctx.table.key.map((f) => `${ctx.table.name}.${f.name}`), pageKeys), p), p)
}

/** What of `params` decides the SQL text. Without parameters, the operation's name: a constant, found at once (plan-cache.ts). */
function shapeOf (ctx: CrudContext, op: string, params: ReadParams): string {
  if (!hasKeys(params)) return op
  const parts = [op, params.where, params.select, params.order ?? params.sort, params.group, params.distinct, params.limit, params.offset, op === 'list' && params.estimateTotal === true]
  return repeatedKey(ctx.table, op, parts, () => JSON.stringify(parts))
}

function hasKeys (params: object): boolean {
  for (const _ in params) return true
  return false
}

function rowsOf (ctx: CrudContext, plan: ReadPlan, planned: PlannedStatement | undefined, id?: string | number): MaybePromise<Row[]> {
  if (planned === undefined) return []
  return andThen(runPlanned(ctx, planned, id), (rows) => decoded(ctx, plan, rows))
}

/**
 * The driver's rows hold the answer's keys in the answer's order (the select list names them):
 * columns read as they are need no second object per row (decision D108).
 */
function decoded (ctx: CrudContext, plan: ReadPlan, rows: Row[]): Row[] {
  return plan.asIs === true ? rows : rows.map((row) => decodeRow(ctx, plan.columns, row))
}

/** A page whose total may be kept, read with the data version in one read transaction where the runner can (decision D135). */
function versionedPage (ctx: CrudContext, plan: ReadPlan, page: PlannedStatement): { items: Row[], version: string } | undefined {
  if (plan.totalKept !== true || ctx.db.isTransaction === true) return undefined
  const read = ctx.direct?.readVersioned?.(page.statement, fillSlots(ctx, page.bindings))
  return read === undefined ? undefined : { items: decoded(ctx, plan, read.rows), version: read.version }
}

// select, list and view answer at once when the database does (SQLite), without a promise
// (decision D109); their callers await them either way. A failure may then be thrown rather than
// rejected: every caller awaits them inside an async function, where both become a rejection.
export function select (ctx: CrudContext, params: ReadParams): MaybePromise<Row[]> {
  const plan = readPlan(ctx, shapeOf(ctx, 'select', params), (c, prepare) => {
    const p = planOf(c, params)
    return { columns: p.columns, items: p.condition === false ? undefined : prepare(pageQuery(c, p, params), { offThread: p.costly, planEachRun: p.searches }) }
  })
  return rowsOf(ctx, plan, plan.items)
}

/**
 * `{ items, total }`: total counts every matching row (groups, when grouped), ignoring limit and
 * offset; with `skipTotal` nothing is counted and total is -1 (counting a large table costs more
 * than the page).
 */
export function list (ctx: CrudContext, params: ReadParams): MaybePromise<{ items: Row[], total: number }> {
  const plan = readPlan(ctx, shapeOf(ctx, 'list', params), (c, prepare) => {
    const p = planOf(c, params)
    if (p.condition === false) return { columns: p.columns }
    const db = c.db
    const grouped = params.group !== undefined || params.distinct === true
    const whole = wholeCondition(c, params, p)
    const counting = whole === false ? p : { ...p, condition: whole }
    const matching = grouped ? baseQuery(c, counting, params.distinct === true) : matchingRows(c, counting).select(db.raw('1'))
    const counted: Knex.QueryBuilder = grouped ? db.count({ total: '*' }).from(matching.as('fb_counted')) : versioned(c, matchingRows(c, counting).count({ total: '*' }))
    const estimator = params.estimateTotal === true ? c.dialect.rowEstimate : undefined
    const total = prepare(counted, { planEachRun: true, offThread: p.costly })
    const totalKept = !c.dialect.readsClock(total.statement.sql)
    return {
      columns: p.columns,
      items: prepare(pageQuery(c, p, params), { offThread: p.costly, planEachRun: p.searches }),
      total,
      totalKept,
      carry: totalKept && !grouped ? carryOf(c, p, total, prepare) : undefined,
      estimate: estimator === undefined ? undefined : prepare(matching, { planEachRun: true, wrap: estimator.explain })
    }
  })
  if (plan.items === undefined || plan.total === undefined) return { items: [], total: params.skipTotal === true ? -1 : 0 }
  if (params.skipTotal === true) return andThen(rowsOf(ctx, plan, plan.items), (items) => ({ items, total: -1 }))
  const page = versionedPage(ctx, plan, plan.items)
  const items = page?.items ?? rowsOf(ctx, plan, plan.items)
  const total = totalOf(ctx, plan, plan.total, page?.version)
  if (!(items instanceof Promise) && !(total instanceof Promise)) return { items, total }
  return Promise.all([items, total]).then(([rows, count]) => ({ items: rows, total: count }))
}

/**
 * The plan's condition for a statement that reads every row it admits (the count): compiled again
 * with semi-joins for the paths it compares (lib/expr/compile.ts#compileCondition), which the
 * databases build once rather than look up per row (where the plan's own condition has them already,
 * Dialect#plansSemiJoins, it is that one). The same rows: the first compile already
 * counted its hops and searches against the request (decision D95).
 */
function wholeCondition (ctx: CrudContext, params: ReadParams, p: MatchingPlan): Condition {
  if (p.driven !== undefined || !followsRelations(ctx) || ctx.dialect.plansSemiJoins) return p.condition
  const again = { semiJoins: true, budget: undefined, requestHops: undefined } as const
  return ruleFirst(ruleCondition(ctx, 'listRule', again), whereOf(ctx, params.where, again))
}

/** Bound where a carry count takes its keys (replaced on each run). */
const KEYS = '\u0000fb_keys'

/**
 * The count of the rows with given keys that the total admits (decision D132): where the dialect
 * looks keys up by index, the table has a one-column key, and the count reads no row of its own
 * table but the one it counts (a rule that reads other rows of it, through a relation to itself,
 * might admit old rows anew when one is inserted). It says what the count reads: an insert into any
 * other table, or an update of columns it does not read, leaves the total as it was.
 */
function carryOf (ctx: CrudContext, p: MatchingPlan, total: PlannedStatement, prepare: Parameters<PlanBuilder>[1]): Carry | undefined {
  const keyIn = ctx.dialect.keyIn
  const reads = statementReads(total.statement.sql)
  if (keyIn === undefined || !uniqueKey(ctx) || p.driven !== undefined || reads.tables.get(ctx.table.name) !== 1) return undefined
  const key = `${ctx.table.quoted}.${ctx.dialect.quote(ctx.table.key[0].name)}`
  // The page's condition, which looks each row's parents up (the count's semi-joins would build the
  // whole set of parents first): the same rows.
  const statement = prepare(versioned(ctx, matchingRows(ctx, p).whereRaw(keyIn(key, ctx.table.key[0]), [KEYS]).count({ total: '*' })))
  const keysAt = statement.bindings.indexOf(KEYS)
  if (keysAt < 0) return undefined
  // Kept with the plan, built once: a request that finds its total kept allocates nothing for it.
  return {
    table: ctx.table.name,
    key: ctx.table.key[0].name,
    reads,
    statement,
    count: (caller, keys) => {
      const bound = fillSlots(caller, statement.bindings)
      bound[keysAt] = JSON.stringify(keys)
      return andThen(runFilled(caller, statement, bound), countedOf)
    }
  }
}

/**
 * Is the table's key one column the database holds unique? A uid field without `unique` may repeat
 * (a table without a primary key names rows by it): counting the inserted keys would count older
 * rows that share them.
 */
function uniqueKey (ctx: CrudContext): boolean {
  const key = ctx.table.key
  if (key.length !== 1) return false
  const field = key[0]
  return field.primary === true || field.unique === true || (ctx.table.data.indexes ?? []).some((index) =>
    index.unique === true && index.where === undefined && (typeof index.fields === 'string' ? [index.fields] : index.fields).join() === field.name)
}

/** A count that also says the data version it read at, where the dialect can (Dialect#statementVersion). */
function versioned (ctx: CrudContext, count: Knex.QueryBuilder): Knex.QueryBuilder {
  const version = ctx.dialect.statementVersion
  return version === undefined ? count : count.select(ctx.db.raw(`${version} AS ${VERSION}`))
}

const VERSION = 'fb_version'

function countedOf (rows: Row[]): Counted {
  const version = rows[0][VERSION]
  return { total: Number(rows[0].total), version: typeof version === 'string' ? version : undefined }
}

/**
 * The exact count, or with an estimate planned, the estimate when it is large enough to be worth it.
 * `version`: the data version the page was read at, when it was read with it (decision D135).
 */
function totalOf (ctx: CrudContext, plan: ReadPlan, total: PlannedStatement, version?: string): MaybePromise<number> {
  const exact = (): MaybePromise<number> => {
    const values = fillSlots(ctx, total.bindings)
    const count = (): MaybePromise<Counted> => andThen(runFilled(ctx, total, values), countedOf)
    if (plan.totalKept !== true) return andThen(count(), (counted) => counted.total)
    return keptTotal(ctx, total, values, count, plan.carry, version)
  }
  const estimator = ctx.dialect.rowEstimate
  if (plan.estimate === undefined || estimator === undefined) return exact()
  const estimate = plan.estimate
  return (async () => {
    const estimated = estimator.rows(await runPlanned(ctx, estimate))
    return estimated >= ESTIMATE_EXACT_BELOW ? estimated : await exact()
  })()
}

/** One record by uid, or 404 (missing, or hidden by the viewRule). */
export function view (ctx: CrudContext, id: string, params: Pick<ReadParams, 'select' | 'where'>): MaybePromise<Row> {
  const value = idValue(ctx, id)
  const plan = readPlan(ctx, shapeOf(ctx, 'view', params), (c, prepare) => {
    const condition = and(idCondition(c, id), ruleFirst(ruleCondition(c, 'viewRule'), whereOf(c, params.where)))
    const columns = outputColumns(c, 'select', params.select)
    if (condition === false) return { columns }
    const db = c.db
    return { columns, items: prepare(applyCondition(db.from(c.table.name).select(selectList(db, c, columns)), condition).limit(1, { skipBinding: true }), { offThread: c.budget.costly, oneRow: true }) }
  })
  return andThen(rowsOf(ctx, plan, plan.items, value), (rows) => {
    if (rows.length === 0) throw errors.recordNotFound()
    return rows[0]
  })
}
