// FleetInterest (lib/realtime/interest.ts) on its own, with a recording stand-in for the database:
// which statements it sends, what it caches, and that a failure makes every table count.
import t from 'tap'
import { FleetInterest } from '../lib/realtime/interest.js'

type Row = Record<string, unknown>

function recorder (answers: { read?: (params: unknown[]) => Row[] } = {}) {
  const reads: unknown[][] = []
  const writes: string[] = []
  const warnings: string[] = []
  const interest = new FleetInterest(
    'me',
    async (_sql, params) => { reads.push(params); return answers.read?.(params) ?? [] },
    async (sql) => { writes.push(sql.split(' ').slice(0, 2).join(' ')); return [] },
    { warn: (_obj, msg) => { warnings.push(msg) } }
  )
  return { interest, reads, writes, warnings }
}

t.test('announce records a table once; renewals withdraw it after two rounds without a subscriber', async (t) => {
  const { interest, writes } = recorder()
  await interest.announce(['posts', 'posts'])
  await interest.announce(['posts'])
  t.same(writes, ['INSERT INTO'], 'one insert for a table announced three times')
  writes.length = 0
  await interest.renewAll(['posts'])
  t.same(writes, ['DELETE FROM', 'INSERT INTO'], 'still wanted: expired rows dropped, the row renewed')
  writes.length = 0
  await interest.renewAll([])
  t.same(writes, ['DELETE FROM', 'INSERT INTO'], 'first round without a subscriber: still renewed')
  writes.length = 0
  await interest.renewAll([])
  t.same(writes, ['DELETE FROM', 'DELETE FROM'], 'second round: withdrawn (and nothing left to renew)')
  writes.length = 0
  await interest.announce(['posts'])
  t.same(writes, ['INSERT INTO'], 'announced again when a subscriber comes back')
})

t.test('interested asks about unknown tables only, trusts a yes, never a no', async (t) => {
  const { interest, reads } = recorder({ read: (params) => (params[0] as string[]).includes('posts') ? [{ table_name: 'posts' }] : [] })
  t.same([...await interest.interested(['posts', 'users'])], ['posts'])
  t.same(reads, [[['posts', 'users'], 'me']], 'one read, this instance excluded')
  t.same([...await interest.interested(['posts', 'users'])], ['posts'])
  t.same(reads[1], [['users'], 'me'], 'the yes is trusted: only users is asked again')
})

t.test('a table that cannot be read makes every table count, and warns once', async (t) => {
  const { interest, warnings } = recorder({ read: () => { throw new Error('relation "_fastbase_realtime_interest" does not exist') } })
  t.same([...await interest.interested(['posts', 'users'])], ['posts', 'users'])
  t.same([...await interest.interested(['posts'])], ['posts'])
  t.equal(warnings.length, 1)
  t.match(warnings[0], /instances send every change/)
})
