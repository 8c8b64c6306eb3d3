// Relation-path cost, measured by `npm run bench` (bench/run.mjs, decision D95): a page of 20
// comments whose listRule follows two relations (`post_id.owner_id.active`) against the same page
// under a plain rule on a column of the comment itself (`visible`, which holds the same answer), on
// 10,000 posts and 20,000 comments. The target is the relation rule within 1.5 times the
// plain one's p50 for the page (`select`, limit 20) and for the list (`list`: the page and its total,
// which counts every row the rule admits); both are held to it, each ratio from the two rules
// measured in the same run, alternating.
import { openFastbase } from './project.mjs'

export const RELATION_POSTS = 10_000
export const RELATION_COMMENTS = 20_000
export const RELATION_TARGET = 1.5
const USERS = 100
const BATCH = 200

const closed = { createRule: null, updateRule: null, deleteRule: null }
const comments = (name, listRule) => ({
  name,
  fields: [
    { name: 'id', type: 'integer', sqlType: 'integer', primary: true, usage: 'record_uid' },
    { name: 'body', type: 'text', sqlType: 'text', notNull: true },
    { name: 'visible', type: 'bool', sqlType: 'boolean', notNull: true },
    { name: 'post_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'posts', column: 'id' } }
  ],
  extensions: [{ name: 'rules', listRule, viewRule: listRule, ...closed }]
})

export function relationsConfig () {
  return {
    appName: 'fastbase relations bench',
    appUrl: 'http://127.0.0.1',
    jwtSecret: 'fastbase-bench-relations-secret',
    rateLimit: false,
    tables: [
      {
        name: 'people',
        fields: [{ name: 'id', type: 'integer', sqlType: 'integer', primary: true }, { name: 'active', type: 'bool', sqlType: 'boolean', notNull: true }],
        extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', ...closed }]
      },
      {
        name: 'posts',
        fields: [
          { name: 'id', type: 'integer', sqlType: 'integer', primary: true },
          { name: 'owner_id', type: 'relation', sqlType: 'integer', foreignKey: { table: 'people', column: 'id' } }
        ],
        extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', ...closed }]
      },
      comments('plain', 'visible == true'),
      comments('related', 'post_id.owner_id.active == true')
    ]
  }
}

/** Post `post`'s owner is person (post * 31) % USERS + 1; every other person is active. */
const ownerOf = (post) => (post * 31) % USERS
const ownerActive = (post) => ownerOf(post) % 2 === 0

async function seed (app) {
  const db = app.fastbase.db
  const people = Array.from({ length: USERS }, (_, i) => ({ id: i + 1, active: i % 2 === 0 }))
  await db('people').insert(people)
  for (let start = 1; start <= RELATION_POSTS; start += BATCH) {
    const rows = []
    for (let id = start; id < start + BATCH && id <= RELATION_POSTS; id++) rows.push({ id, owner_id: ownerOf(id) + 1 })
    await db('posts').insert(rows)
  }
  for (let start = 1; start <= RELATION_COMMENTS; start += BATCH) {
    const rows = []
    for (let id = start; id < start + BATCH && id <= RELATION_COMMENTS; id++) {
      const post = (id * 7919) % RELATION_POSTS + 1
      rows.push({ id, body: `comment ${id}`, visible: ownerActive(post), post_id: post })
    }
    await db('plain').insert(rows)
    await db('related').insert(rows)
  }
  if (app.fastbase.dialect.name === 'postgres') await db.raw('ANALYZE')
}

function percentile (sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))]
}

async function request (app, url) {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const res = await app.inject({ method: 'GET', url })
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  if (res.statusCode !== 200) throw new Error(`relations bench: ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
  return { ms, cpu: (used.user + used.system) / 1000, body: res.body }
}

const summary = (runs) => {
  const times = runs.map((r) => r.ms).sort((a, b) => a - b)
  const cpu = runs.map((r) => r.cpu).sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), cpuP50: percentile(cpu, 50) }
}

/**
 * The two URLs one request at a time, alternating (plain, related, plain, ...), so that the machine's
 * load weighs on both alike. CPU is this process's (the server's own work; on SQLite the queries
 * too, on PostgreSQL not the database server's).
 */
async function timedPair (app, urls, samples, warmup, before) {
  const runs = urls.map(() => [])
  const bodies = []
  for (let i = 0; i < warmup + samples; i++) {
    for (const [j, url] of urls.entries()) {
      await before?.(j)
      const run = await request(app, url)
      if (i === 0) bodies[j] = run.body
      if (i >= warmup) runs[j].push(run)
    }
  }
  return runs.map((r, j) => ({ ...summary(r), body: bodies[j] }))
}

/**
 * Seeds `databaseUrl` (a fresh database), then times the page and the counted list under each rule,
 * alternating the two so that the machine's load weighs on both alike.
 */
export async function measureRelations (databaseUrl, dataDir, { samples = 200, warmup = 20 } = {}) {
  const app = await openFastbase(relationsConfig(), databaseUrl, dataDir)
  try {
    await seed(app)
    // A write that changes no answer, before each request: the list's total is then counted anew
    // rather than kept from the same list before (decision D125), what the first list after a change
    // fastbase cannot follow costs (a raw statement, another process). Not timed.
    const write = async () => { await app.fastbase.db('people').where({ id: 1 }).update({ active: true }) }
    // A comment inserted through the in-process API into the table about to be listed, before each
    // request: the kept total is carried across it (decision D132), the common write of such an app.
    // The same row into both tables, so the two answers stay the same. Not timed.
    let next = RELATION_COMMENTS
    const tables = ['plain', 'related']
    const insert = async (j) => {
      if (j === 0) next++
      const post = (next * 7919) % RELATION_POSTS + 1
      await app.fastbase.tables[tables[j]].insert({ values: { id: next, body: `comment ${next}`, visible: ownerActive(post), post_id: post } }, { as: 'system' })
    }
    // A comment's body edited through the in-process API: a column neither rule reads (D132).
    let edits = 0
    const edit = async (j) => {
      if (j === 0) edits++
      await app.fastbase.tables[tables[j]].update({ where: 'id == {:id}', params: { id: 1 + (edits % 20) }, set: { body: `'edited ${edits}'` } }, { as: 'system' })
    }
    const shapes = [
      ['select, 20 rows', 'select?limit=20&select=id,body'],
      ['list, 20 rows and the total', 'list?limit=20&select=id,body'],
      ['list after a raw write (counted)', 'list?limit=20&select=id,body', write],
      ['list after an API insert (carried)', 'list?limit=20&select=id,body', insert],
      ['list after an API edit (carried)', 'list?limit=20&select=id,body', edit]
    ]
    const scenarios = []
    for (const [name, query, before] of shapes) {
      const [plain, related] = await timedPair(app, [`/api/v1/table/plain/${query}`, `/api/v1/table/related/${query}`], samples, warmup, before)
      if (plain.body !== related.body) throw new Error(`relations bench: ${name}: the two rules answered differently`)
      const { body: _p, ...plainTimes } = plain
      const { body: _r, ...relatedTimes } = related
      scenarios.push({ name, plain: plainTimes, related: relatedTimes, ratio: related.p50 / plain.p50, cpuRatio: related.cpuP50 / plain.cpuP50 })
    }
    return { posts: RELATION_POSTS, comments: RELATION_COMMENTS, samples, scenarios, target: RELATION_TARGET }
  } finally {
    await app.close()
  }
}

export function relationsReport (dialect, result) {
  const lines = [`\nRelation paths on ${dialect}: listRule post_id.owner_id.active (2 hops) vs a plain column rule, ${result.posts} posts, ` +
    `${result.comments} comments, ${result.samples} requests one at a time per shape; target: each shape within ${result.target}x`]
  for (const s of result.scenarios) {
    lines.push(`  ${s.name.padEnd(36)} plain p50 ${s.plain.p50.toFixed(2).padStart(7)} ms  related p50 ${s.related.p50.toFixed(2).padStart(7)} ms  ratio ${s.ratio.toFixed(2)}  (this process's CPU p50 ${s.plain.cpuP50.toFixed(2)} / ${s.related.cpuP50.toFixed(2)} ms, ratio ${s.cpuRatio.toFixed(2)})`)
  }
  for (const s of result.scenarios) lines.push(`  ${s.name}: ${s.ratio <= result.target ? 'within' : 'OVER'} the target`)
  return lines.join('\n')
}
