// FleetInterest (lib/realtime/interest.ts) on its own, with a recording stand-in for the database:
// which statements it sends, what it caches, and that a failure makes every table count.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { FleetInterest, NO_TRUST_MS } from '../../../lib/realtime/interest.js'

type Row = Record<string, unknown>

/** Lets background reads finish. */
const settle = async (): Promise<void> => { await sleep(5) }

function recorder (answers: { read?: (params: unknown[]) => Row[] } = {}, clock?: () => number) {
  const reads: unknown[][] = []
  const writes: string[] = []
  const warnings: string[] = []
  const interest = new FleetInterest(
    'me',
    async (_sql, params) => { reads.push(params); return answers.read?.(params) ?? [] },
    async (sql) => { writes.push(sql.split(' ').slice(0, 2).join(' ')); return [] },
    { warn: (_obj, msg) => { warnings.push(msg) } },
    clock
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

t.test('interested asks about unknown tables only, trusts a yes, and a no for NO_TRUST_MS', async (t) => {
  const { interest, reads } = recorder({ read: (params) => (params[0] as string[]).includes('posts') ? [{ table_name: 'posts' }] : [] })
  t.same([...await interest.interested(['posts', 'users'])], ['posts'])
  t.same(reads, [[['posts', 'users'], 'me']], 'one read, this instance excluded')
  t.same([...await interest.interested(['posts', 'users'])], ['posts'])
  t.equal(reads.length, 1, 'the yes and the fresh no are both trusted: nothing asked again')
  await sleep(NO_TRUST_MS + 10)
  t.same([...await interest.interested(['posts', 'users'])], ['posts'])
  t.same(reads[1], [['users'], 'me'], 'the no has expired: only users is asked again')
})

t.test('a write may skip its capture only while a no holds, and never for a table this instance announces', async (t) => {
  let now = 1000
  const { interest, reads } = recorder({}, () => now)
  t.equal(interest.mayWant('posts'), true, 'nothing known: capture')
  t.equal(interest.nobodyElse('posts'), false)
  await settle()
  t.equal(reads.length, 1, 'and the table is read in the background')
  t.equal(interest.mayWant('posts'), false, 'a fresh no: skip')
  t.equal(interest.nobodyElse('posts'), true, 'a write committed now was missed by nobody')
  now += NO_TRUST_MS - 150
  t.equal(interest.mayWant('posts'), false, 'well within the no: skip, and nothing read')
  t.equal(reads.length, 1)
  now += 60
  t.equal(interest.mayWant('posts'), false, 'close to its end: still skip')
  t.equal(interest.mayWant('posts'), false)
  t.equal(reads.length, 2, 'but read again ahead of time, once')
  await settle()
  now += 80
  t.equal(interest.mayWant('posts'), false, 'the new no holds past the old one')
  t.equal(interest.nobodyElse('posts'), true)
  now += NO_TRUST_MS
  t.equal(interest.nobodyElse('posts'), false, 'expired: a write committing now is not covered')
  t.equal(interest.mayWant('posts'), true, 'and one starting now captures')
  await settle()
  await interest.interested(['users'])
  t.equal(interest.mayWant('users'), false)
  void interest.announce(['users'])
  t.equal(interest.mayWant('users'), true, 'announced here (at once, before it is committed): capture')
})

t.test('announce resolves only once every earlier no has expired', async (t) => {
  const { interest } = recorder()
  const started = performance.now()
  await interest.announce(['posts'])
  t.ok(performance.now() - started >= NO_TRUST_MS - 1, `waited ${Math.round(performance.now() - started)} ms`)
  const again = performance.now()
  await interest.announce(['posts'])
  t.ok(performance.now() - again < NO_TRUST_MS, 'a table announced already: no wait')
})

t.test('missedBySomeone: one read answers a burst of late writes; a later one asks again', async (t) => {
  let now = 1000
  let answer: Row[] = []
  const { interest, reads } = recorder({ read: () => answer }, () => now)
  t.same(await Promise.all([interest.missedBySomeone('posts'), interest.missedBySomeone('posts')]), [false, false])
  t.equal(reads.length, 1, 'one read for both')
  answer = [{ table_name: 'posts' }]
  now += NO_TRUST_MS
  t.equal(await interest.missedBySomeone('posts'), true, 'a subscriber elsewhere now: missed')
  t.equal(reads.length, 2)
})

t.test('a table that cannot be read makes every table count, and warns once', async (t) => {
  const { interest, warnings } = recorder({ read: () => { throw new Error('relation "_fastbase_realtime_interest" does not exist') } })
  t.same([...await interest.interested(['posts', 'users'])], ['posts', 'users'])
  t.same([...await interest.interested(['posts'])], ['posts'])
  t.equal(warnings.length, 1)
  t.match(warnings[0], /instances send every change/)
})
