// Which caller conditions need the rule-first guard: the compiler marks plain comparisons of columns
// with bound constants safe (no error, same cost on any row); everything else is guarded. Asserted on
// the SQL each dialect gets.
import t from 'tap'
import { describeTables } from '../../../lib/table/descriptor.js'
import { sqlite } from '../../../lib/dialects/sqlite.js'
import { postgres } from '../../../lib/dialects/postgres.js'
import { compile, toCondition, parse } from '../../../lib/expr/index.js'
import { ruleFirst } from '../../../lib/crud/context.js'
import type { TableData } from '../../../schemas/config.js'

const table: TableData = {
  name: 'notes',
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
    { name: 'title', type: 'text', sqlType: 'text' },
    { name: 'views', type: 'integer', sqlType: 'integer' },
    { name: 'meta', type: 'json', sqlType: 'json' },
    { name: 'owner', type: 'text', sqlType: 'text', notNull: true }
  ]
}

for (const dialect of [sqlite, postgres]) {
  t.test(`${dialect.name}: safe conditions`, async (t) => {
    const descriptor = describeTables([table], dialect).get('notes')!
    const condition = (src: string) => toCondition(compile(parse(src), { dialect, table: descriptor, globals: { auth: {}, request: {}, params: {} }, seesHidden: false }))
    const safe = ['views > 1', "title == 'a' & views <= 2", "!(title != 'b') | views == null", 'views in (1, 2, 3)', 'id = views']
    const guarded = ["title ~ 'a%'", "meta ->> 'a' == 1", 'length(title) > 1', 'views + 1 > 2', "views > 1 & title ~ '%x'", 'views in (1, views + 1)']
    for (const src of safe) t.match(condition(src), { safe: true }, `safe: ${src}`)
    for (const src of guarded) t.notOk((condition(src) as { safe?: true }).safe, `guarded: ${src}`)
    const sqlOf = (src: string) => (condition(src) as { sql: string }).sql
    t.match(sqlOf("owner == 'a'"), /^\("notes"\."owner" = /, 'a notNull column and a constant: plain =, which indexes serve')
    t.match(sqlOf("owner != 'a'"), /^\("notes"\."owner" <> /)
    t.notMatch(sqlOf("title == 'a'"), / = /, 'a nullable column keeps the null-safe comparison')
    const rule = { sql: '("notes"."views" > ?)', bindings: [0] }
    t.match((ruleFirst(rule, condition('views < 9')) as { sql: string }).sql, /^\(\("notes"\."views" > \?\)\) AND \(\("notes"\."views" < /, 'a safe condition is ANDed with the rule')
    t.match((ruleFirst(rule, condition("title ~ 'a%'")) as { sql: string }).sql, /CASE WHEN \(\("notes"\."views" > \?\)\) THEN .* ELSE FALSE END/, 'anything else runs only where the rule holds')
  })
}
