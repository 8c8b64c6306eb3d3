// The stack of idle PostgreSQL connections in front of Knex's pool (lib/dialects/postgres-lease.ts):
// reused between statements, handed back whenever anything else asks the pool.
import t from 'tap'
import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { ConnectionLease, type LeasePool, type LeasedConnection } from '../../../lib/dialects/postgres-lease.js'
import { connect } from '../../../lib/dialects/index.js'
import { dialects, freshDir, sharedDatabase } from '../../helper.js'

interface Fake extends LeasedConnection { id: number }

/** A pool of numbered connections that records what it handed out and got back. */
function fakePool (max = 10) {
  const events = new EventEmitter()
  let next = 0
  let pending = 0
  let used = 0
  const log: string[] = []
  const client: LeasePool<Fake> & { foreignAcquire: () => void, setPending: (n: number) => void } = {
    acquireConnection: async () => {
      events.emit('acquireRequest')
      const connection = { id: next++ }
      used++
      log.push(`acquire ${connection.id}`)
      return connection
    },
    releaseConnection: (connection) => {
      used--
      log.push(`release ${connection.id}`)
    },
    pool: {
      max,
      numUsed: () => used,
      numPendingCreates: () => 0,
      numPendingAcquires: () => pending,
      on: (event, listener) => events.on(event, listener),
      removeListener: (event, listener) => events.removeListener(event, listener)
    },
    foreignAcquire: () => { events.emit('acquireRequest') },
    setPending: (n) => { pending = n }
  }
  return { client, log }
}

t.test('a released connection serves the next statement without the pool', async (t) => {
  const { client, log } = fakePool()
  const lease = new ConnectionLease(client)
  t.teardown(() => lease.close())
  const first = await lease.acquire()
  lease.release(first)
  const again = await lease.acquire()
  t.equal(again, first, 'the same connection')
  t.same(log, ['acquire 0'], 'the pool was asked once, and its own request did not flush anything')
  const second = await lease.acquire()
  t.equal(second.id, 1, 'a second at once comes from the pool')
  lease.release(again)
  lease.release(second)
  t.same(log, ['acquire 0', 'acquire 1'], 'both wait on the stack')
})

t.test('anything else asking the pool gets every idle connection back first', async (t) => {
  const { client, log } = fakePool()
  const lease = new ConnectionLease(client)
  t.teardown(() => lease.close())
  const [a, b] = [await lease.acquire(), await lease.acquire()]
  lease.release(a)
  lease.release(b)
  client.foreignAcquire()
  t.same(log.slice(2).sort(), ['release 0', 'release 1'], 'a transaction\'s acquire flushes the stack')
  await lease.acquire()
  t.same(log.at(-1), 'acquire 2', 'the stack is empty afterwards')
})

t.test('waiting acquirers and broken connections go to the pool', async (t) => {
  const { client, log } = fakePool()
  const lease = new ConnectionLease(client)
  t.teardown(() => lease.close())
  const a = await lease.acquire()
  client.setPending(1)
  lease.release(a)
  t.same(log, ['acquire 0', 'release 0'], 'someone waits on the pool: it gets the connection')
  client.setPending(0)
  const b = await lease.acquire()
  lease.release(b)
  b.__knex__disposed = new Error('socket closed')
  const c = await lease.acquire()
  t.not(c, b, 'a connection Knex marked broken is not reused')
  t.same(log, ['acquire 0', 'release 0', 'acquire 1', 'release 1', 'acquire 2'], 'it went back to the pool, which destroys it')
})

t.test('with the pool full, a statement waits for the next connection a statement releases', async (t) => {
  const { client, log } = fakePool(1)
  const lease = new ConnectionLease(client)
  t.teardown(() => lease.close())
  const a = await lease.acquire()
  const waiting = lease.acquire()
  lease.release(a)
  t.equal(await waiting, a, 'handed over directly')
  t.same(log, ['acquire 0'], 'without the pool')

  const third = lease.acquire()
  client.setPending(1)
  lease.release(a)
  client.setPending(0)
  const fromPool = await third
  t.not(fromPool, a, 'another waits on the pool: it comes first, and the waiting statement asks the pool itself')
  t.same(log, ['acquire 0', 'release 0', 'acquire 1'])
  lease.release(fromPool)
})

t.test('a statement waiting a second for a released connection asks the pool instead', async (t) => {
  const { client, log } = fakePool(1)
  const lease = new ConnectionLease(client)
  t.teardown(() => lease.close())
  const held = await lease.acquire()
  const waiting = lease.acquire()
  await sleep(2500)
  const got = await waiting
  t.not(got, held, 'not the connection still in use')
  t.same(log, ['acquire 0', 'acquire 1'], 'from the pool, whose own acquire timeout applies from there')
  lease.release(got)
  lease.release(held)
})

t.test('an unused connection goes back to the pool after a second, and on close', async (t) => {
  const { client, log } = fakePool()
  const lease = new ConnectionLease(client)
  lease.release(await lease.acquire())
  await sleep(2500)
  t.same(log, ['acquire 0', 'release 0'], 'idle past a second: back in the pool')
  lease.release(await lease.acquire())
  lease.close()
  t.same(log, ['acquire 0', 'release 0', 'acquire 1', 'release 1'], 'close hands back what is stacked')
})

t.test('PostgreSQL: a transaction runs while the stack holds every connection of the pool', { skip: dialects.includes('postgres') ? false : 'PostgreSQL not configured' }, async (t) => {
  const previous = process.env.FASTBASE_PG_POOL_MAX
  process.env.FASTBASE_PG_POOL_MAX = '2'
  t.teardown(() => { if (previous === undefined) delete process.env.FASTBASE_PG_POOL_MAX; else process.env.FASTBASE_PG_POOL_MAX = previous })
  const connection = connect(sharedDatabase(t, 'postgres'), freshDir(t))
  t.teardown(connection.close)
  await connection.prepare()
  const statement = { sql: 'SELECT pg_sleep(0.05), 1 AS one', native: 'SELECT pg_sleep(0.05), 1 AS one', bindings: [] }
  // Two at once take both connections of the pool; both end up idle on the stack.
  const both = await Promise.all([connection.direct!.read(statement, []), connection.direct!.read(statement, [])])
  t.same(both.map((rows) => rows?.[0]?.one), [1, 1])
  const answered = await connection.knex.transaction(async (trx) => (await trx.raw('SELECT 2 AS two')).rows)
  t.same(answered, [{ two: 2 }], 'the transaction got a connection from the stack, not a wait for the acquire timeout')
  const after = await connection.direct!.read(statement, [])
  t.same(after?.[0]?.one, 1, 'statements go on afterwards')
  // Destroying Knex directly (not through the connection's close) waits for every lent connection.
  let destroyed = false
  const destroying = connection.knex.destroy().then(() => { destroyed = true })
  await Promise.race([destroying, sleep(500)])
  t.ok(destroyed, 'the stacked connection went back to the pool as it closed')
})
