// Dates are UTC on both databases whatever PostgreSQL's own time zone (decision D81): a time without
// an offset means UTC, date functions print UTC, and answers carry ISO text with milliseconds.
import t from 'tap'
import { buildApp, forEachDialect, sharedDatabase, adminToken, dialects, freshDir } from '../../helper.js'
import { connect } from '../../../lib/dialects/index.js'
import { isoFromUtcText, isCanonicalIso } from '../../../lib/dialects/postgres-timestamp.js'
import type { DatabaseSettings } from '../../../schemas/config.js'

const config: DatabaseSettings = {
  appUrl: 'http://localhost', jwtSecret: 'time-zone-secret',
  tables: [{
    name: 'events',
    fields: [
      { name: 'id', type: 'integer', sqlType: 'integer', primary: true, autoIncrement: true, usage: 'record_uid' },
      { name: 'at', type: 'date', sqlType: 'timestamp' },
      { name: 'created', type: 'date', sqlType: 'timestamp', usage: 'record_created' }
    ],
    extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: 'true', deleteRule: 'true' }]
  }]
}

/** PostgreSQL whose sessions default to UTC+13:45, as a server configured for another zone would. */
function awayFromUtc (t: Parameters<typeof sharedDatabase>[0], dialect: 'sqlite' | 'postgres'): string {
  const url = sharedDatabase(t, dialect)
  if (dialect === 'sqlite') return url
  const away = new URL(url)
  away.searchParams.set('options', '-c TimeZone=Pacific/Chatham')
  return away.toString()
}

forEachDialect(t, 'dates are UTC, whatever the database server\'s time zone', async (t, dialect) => {
  const app = await buildApp(t, config, { dialect, databaseUrl: awayFromUtc(t, dialect) })
  const admin = { authorization: `Bearer ${adminToken}` }
  const insert = async (at: string) => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/table/events/insert', headers: admin, payload: { values: { at }, returning: 'id,at,created' } })
    t.equal(res.statusCode, 200, res.body)
    return res.json()[0] as { id: number, at: string, created: string }
  }
  t.equal((await insert('2026-01-01 12:00:00')).at, '2026-01-01T12:00:00.000Z', 'a time without an offset is UTC')
  t.equal((await insert('2026-01-01T12:00:00+02:00')).at, '2026-01-01T10:00:00.000Z', 'an offset is applied')
  const fine = await insert('2026-01-01T12:00:00.123456Z')
  t.equal(fine.at, '2026-01-01T12:00:00.123Z', 'milliseconds, truncated')
  t.equal((await insert('2026-01-01T12:00:00.5Z')).at, '2026-01-01T12:00:00.500Z', 'a short fraction is padded')
  t.match(fine.created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'the time of insertion in the same form')
  t.ok(Math.abs(Date.parse(fine.created) - Date.now()) < 60_000, 'and it is now, in UTC')

  const printed = await app.inject({ method: 'GET', url: '/api/v1/table/events/select', query: { select: 'datetime(at) as d, date(at) as day, time(at) as t', where: `id = ${fine.id}` } })
  t.equal(printed.statusCode, 200, printed.body)
  t.same(printed.json(), [{ d: '2026-01-01 12:00:00', day: '2026-01-01', t: '12:00:00' }], 'date functions print UTC')
  const matched = await app.inject({ method: 'GET', url: '/api/v1/table/events/select', query: { select: 'id', where: "at >= '2026-01-01 10:00:00' & at < '2026-01-01 11:00:00'" } })
  t.equal(matched.statusCode, 200, matched.body)
  t.same(matched.json(), [{ id: 2 }], 'a compared time without an offset is UTC too')
})

t.test('PostgreSQL sessions run in UTC, so fastbase\'s own statements read timestamps without a Date', { skip: dialects.includes('postgres') ? false : 'PostgreSQL not configured' }, async (t) => {
  const connection = connect(awayFromUtc(t, 'postgres'), freshDir(t))
  t.teardown(connection.close)
  await connection.prepare()
  const zone = await connection.knex.raw('SHOW TIME ZONE')
  t.same(zone.rows, [{ TimeZone: 'UTC' }], 'the server\'s own default (here UTC+13:45) is overridden')
  const sql = "SELECT CAST('2026-03-04 05:06:07.089+00' AS timestamptz) AS t, CAST('infinity' AS timestamptz) AS forever"
  const direct = await connection.direct!.read({ sql, native: sql }, [])
  t.same(direct, [{ t: '2026-03-04T05:06:07.089Z', forever: Infinity }], 'fastbase\'s own statements: ISO text; other forms as pg parses them')
  const viaKnex = await connection.knex.raw(sql)
  t.type(viaKnex.rows[0].t, Date, 'a Knex query (a developer\'s) still gets a Date')
  t.equal(viaKnex.rows[0].t.toISOString(), '2026-03-04T05:06:07.089Z')
})

t.test('isoFromUtcText: the UTC text form, and nothing else', async (t) => {
  t.equal(isoFromUtcText('2026-11-27 01:21:06+00'), '2026-11-27T01:21:06.000Z')
  t.equal(isoFromUtcText('2026-11-27 01:21:06.4+00'), '2026-11-27T01:21:06.400Z')
  t.equal(isoFromUtcText('2026-11-27 01:21:06.43+00'), '2026-11-27T01:21:06.430Z')
  t.equal(isoFromUtcText('2026-11-27 01:21:06.434999+00'), '2026-11-27T01:21:06.434Z', 'truncated as a Date truncates')
  t.equal(isoFromUtcText('0042-01-02 03:04:05+00'), '0042-01-02T03:04:05.000Z', 'a small year, zero-padded as PostgreSQL prints it')
  for (const other of ['2026-11-27 01:21:06+01', '2026-11-27 01:21:06+05:30', '0044-03-15 12:00:00+00 BC', '12026-01-01 00:00:00+00', 'infinity', '-infinity', '2026-11-27', '2026-11-27 01:21:06.1234567+00', '2026-11-27T01:21:06Z']) {
    t.equal(isoFromUtcText(other), undefined, `${other}: left to pg's parser`)
  }
  // Every fraction PostgreSQL can print gives the milliseconds a Date made from it keeps.
  for (const fraction of ['1', '09', '999', '0289', '57001', '999999', '000001']) {
    const text = `2026-11-27 01:21:06.${fraction}+00`
    t.equal(isoFromUtcText(text), new Date(Date.UTC(2026, 10, 27, 1, 21, 6, 1000 * Number.parseFloat(`.${fraction}`))).toISOString(), fraction)
  }
  t.ok(isCanonicalIso('2026-11-27T01:21:06.000Z'))
  t.notOk(isCanonicalIso('2026-11-27T01:21:06.000+00:00'), 'JSON\'s form inside an expanded relation is parsed')
  t.notOk(isCanonicalIso('2026-11-27 01:21:06.000Z'))
})
