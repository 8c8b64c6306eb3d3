// What a count statement reads (lib/crud/sql-reads.ts, decision D132): tables and their columns, from
// the text fastbase writes, or "any column" where a name cannot be placed.
import t from 'tap'
import { statementReads } from '../../../lib/crud/sql-reads.js'

const plain = (reads: ReturnType<typeof statementReads>): object => ({
  tables: Object.fromEntries(reads.tables),
  columns: reads.columns === undefined ? undefined : Object.fromEntries([...reads.columns].map(([k, v]) => [k, [...v].sort()]))
})

t.test('a count under a 2-hop rule, as the compiler and Knex write it', async (t) => {
  const sql = 'select count(*) as `total` from `comments` where (("comments"."post_id" IN (SELECT "fb_r1"."id" FROM "posts" AS "fb_r1" JOIN "people" AS "fb_r2" ON "fb_r2"."id" = "fb_r1"."owner_id" WHERE ("fb_r2"."active" = ?))) OR ((SELECT "fb_r1"."owner_id" FROM "posts" AS "fb_r1" WHERE "fb_r1"."id" = "comments"."post_id") IS NULL)) AND (("comments"."body" = ?))'
  t.same(plain(statementReads(sql)), {
    tables: { comments: 1, posts: 2, people: 1 },
    columns: { comments: ['body', 'post_id'], posts: ['id', 'owner_id'], people: ['active', 'id'] }
  })
})

t.test('PostgreSQL\'s count with its snapshot column', async (t) => {
  const sql = 'select count(*) as "total", pg_current_snapshot()::text AS fb_version from "notes" where "notes"."owner" = ?'
  t.same(plain(statementReads(sql)), { tables: { notes: 1 }, columns: { notes: ['owner'] } })
})

t.test('an alias that stands for two tables gives its columns to both', async (t) => {
  const sql = 'select count(*) from "a" where "a"."x" IN (SELECT "fb_r1"."id" FROM "b" AS "fb_r1") AND "a"."y" IN (SELECT "fb_r1"."id" FROM "c" AS "fb_r1" WHERE "fb_r1"."z" = ?)'
  t.same(plain(statementReads(sql)), { tables: { a: 1, b: 1, c: 1 }, columns: { a: ['x', 'y'], b: ['id', 'z'], c: ['id', 'z'] } })
})

t.test('a name it cannot place: any column may be read', async (t) => {
  t.equal(statementReads('select count(*) from "a" where "x" = ?').columns, undefined, 'an unqualified column')
  t.equal(statementReads('select count(*) from "a" where "q"."x" = ?').columns, undefined, 'a qualifier that is no table or alias')
  t.same([...statementReads('select count(*) from "a" where "q"."x" = ?').tables], [['a', 1]], 'the tables are still known')
})

t.test('a table read twice is counted twice', async (t) => {
  t.equal(statementReads('select count(*) from "t" where "t"."p" IN (SELECT "fb_r1"."id" FROM "t" AS "fb_r1")').tables.get('t'), 2)
})
