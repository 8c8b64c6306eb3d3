// SQLite's realtime condition evaluation (lib/realtime/evaluate-sqlite.ts): on its own thread, with
// the classes' conditions compiled as for `list`. Which rows each class gets, classes whose
// condition fails, collations and blobs, and the event loop left free however many classes there are.
import t from 'tap'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { compile, toCondition, parse } from '../../../lib/expr/index.js'
import { SqliteEvaluator } from '../../../lib/realtime/evaluate-sqlite.js'
import type { Fragment } from '../../../lib/dialects/types.js'
import type { TableData } from '../../../schemas/config.js'

const table: TableData = {
  name: 'notes',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
    { name: 'title', type: 'text', sqlType: 'text', collate: 'NOCASE' },
    { name: 'views', type: 'integer', sqlType: 'integer' },
    { name: 'data', type: 'text', sqlType: 'blob' }
  ]
}
const descriptor = describeTables([table], sqlite).get('notes')!
const classOf = (src: string): { name: string, condition: Fragment } => {
  const compiled = toCondition(compile(parse(src), { dialect: sqlite, table: descriptor, globals: { auth: {}, request: {}, params: {} }, seesHidden: false }))
  if (typeof compiled === 'boolean') throw new Error(`${src} folded to ${compiled}`)
  return { name: src, condition: compiled }
}
const rows = [
  { id: 1, title: 'Hello', views: 3, data: Buffer.from([1, 2]) },
  { id: 2, title: 'world', views: 10, data: null },
  { id: 3, title: 'HELLO again', views: null, data: null }
]
const batch = { table: descriptor, keys: rows.map((r) => [r.id]), rows }

t.test('each row goes to the classes whose condition holds on it, in the order given', async (t) => {
  const evaluator = new SqliteEvaluator(sqlite, {})
  t.teardown(() => evaluator.close())
  const classes = [classOf('views > 5'), classOf("title == 'hello'"), classOf('views == null'), classOf("title ~ 'hello%'"), classOf('id >= 1')]
  const names = (matches: Array<Array<{ name: string }>>) => matches.map((m) => m.map((c) => c.name))
  t.same(names(await evaluator.matches(batch, classes)), [
    ["title == 'hello'", "title ~ 'hello%'", 'id >= 1'],
    ['views > 5', 'id >= 1'],
    ['views == null', "title ~ 'hello%'", 'id >= 1']
  ], 'NOCASE compares as the column declares it; null as null')
  t.same(names(await evaluator.matches({ ...batch, keys: [[2]], rows: [rows[1]] }, classes.slice(0, 2))), [['views > 5']], 'the same classes again, on another batch (statements kept)')
})

t.test('a class whose condition cannot run gets nothing; the others are unaffected', async (t) => {
  const evaluator = new SqliteEvaluator(sqlite, {})
  t.teardown(() => evaluator.close())
  const broken = { name: 'broken', condition: { sql: '"notes"."nope" = ?', bindings: [1] } }
  const fine = classOf('views > 5')
  const matches = await evaluator.matches(batch, [broken, fine])
  t.same(matches.map((m) => m.map((c) => c.name)), [[], ['views > 5'], []])
})

t.test('a condition that fails at run time on some rows: no match for those rows, the others judged as usual', async (t) => {
  const evaluator = new SqliteEvaluator(sqlite, {})
  t.teardown(() => evaluator.close())
  // json_extract raises on text that is not JSON ('Hello', 'HELLO again'); views 10 never reaches it.
  const partly = { name: 'partly', condition: { sql: 'CASE WHEN "notes"."views" > 5 THEN 1 ELSE json_extract("notes"."title", ?) END', bindings: ['$'] } }
  const fine = classOf('id >= 2')
  t.same((await evaluator.matches(batch, [partly, fine])).map((m) => m.map((c) => c.name)), [[], ['partly', 'id >= 2'], ['id >= 2']])
  t.same((await evaluator.matches(batch, [partly])).map((m) => m.length), [0, 1, 0], 'again, with the statements kept')
  // A top-level OR stays one condition when the row's key is added to it.
  const either = { name: 'either', condition: { sql: 'json_extract("notes"."title", ?) = 1 OR "notes"."id" = 3', bindings: ['$'] } }
  t.same((await evaluator.matches(batch, [either])).map((m) => m.length), [0, 0, 0], 'json_extract fails on every row before OR is read')
  const orLater = { name: 'orLater', condition: { sql: '"notes"."id" = 3 OR json_extract("notes"."title", ?) = 1', bindings: ['$'] } }
  t.same((await evaluator.matches(batch, [orLater])).map((m) => m.length), [0, 0, 1], 'the row the OR decides first matches, alone')
})

t.test('two thousand distinct classes: evaluated off the event loop', async (t) => {
  const evaluator = new SqliteEvaluator(sqlite, {})
  t.teardown(() => evaluator.close())
  // Long conditions of many alternatives, each class distinct.
  const classes = Array.from({ length: 2000 }, (_, i) => classOf(Array.from({ length: 40 }, (_, k) => `views == ${i * 40 + k}`).join(' | ')))
  // Off the event loop: it keeps turning while the batch is evaluated (on the main thread it could not
  // turn until the evaluation ended). Counting turns, not timing them: how long each takes depends on
  // the machine's load, and the time the event loop is blocked is measured by `npm run bench`.
  const measure = async () => {
    let turns = 0
    let pending = true
    const turn = () => { if (pending) { turns++; setImmediate(turn) } }
    setImmediate(turn)
    const matches = await evaluator.matches(batch, classes)
    pending = false
    return { matches, turns }
  }
  const first = await measure()
  t.same(first.matches.map((m) => m.length), [1, 1, 0], 'views 3 and views 10 each match one class')
  t.equal(first.matches[0][0], classes[0])
  const again = await measure()
  t.same(again.matches.map((m) => m.length), [1, 1, 0])
  t.ok(first.turns >= 10, `first batch (conditions sent, statements prepared): the event loop turned ${first.turns} times meanwhile`)
  t.ok(again.turns >= 10, `next batch: the event loop turned ${again.turns} times meanwhile`)
})
