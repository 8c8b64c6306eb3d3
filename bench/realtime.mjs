// Realtime cost, measured by `npm run bench` (bench/run.mjs) against a fastbase server in its own
// process: write throughput (the insert scenario, autocannon) with no subscriber and with 1,000
// subscribers connected, and fan-out: change events per second delivered to those 1,000 subscribers
// (10 streams for each of the 100 users, so the posts' listRule `published == true | author_id ==
// auth.uid` is evaluated for 100 subscriber classes per change) while the inserts run.
// The subscribers are real HTTP clients in this process (fetch); each counts `event: change` frames.
import { loadavg } from 'node:os'
import autocannon from 'autocannon'

const SUBSCRIBERS_PER_USER = 10

/** Opens one stream; resolves once the `connect` event came. Counts change, error and gap events. */
async function subscribe (url, token, counters) {
  const controller = new AbortController()
  const res = await fetch(`${url}/api/v1/realtime?subscribe=posts`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  if (res.status !== 200) throw new Error(`realtime: ${res.status} ${await res.text()}`)
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let carry = ''
  let connected
  const ready = new Promise((resolve) => { connected = resolve })
  const count = (text, needle) => { let n = 0; let at = -1; while ((at = text.indexOf(needle, at + 1)) >= 0) n++; return n }
  ;(async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        const text = carry + decoder.decode(value, { stream: true })
        // A frame name split between two chunks is counted once: the tail is kept for the next one.
        const cut = Math.max(0, text.length - 16)
        const whole = text.slice(0, cut)
        counters.change += count(whole, 'event: change\n')
        counters.error += count(whole, 'event: error\n')
        counters.gap += count(whole, 'event: gap\n')
        if (whole.includes('event: connect\n') || text.includes('event: connect\n')) connected()
        carry = text.slice(cut)
        counters.last = Date.now()
      }
    } catch {}
  })()
  await ready
  return () => controller.abort()
}

async function inserts (url, fx, seconds, connections) {
  let i = 0
  const user = (n) => fx.users[n % fx.users.length]
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{
      setupRequest: (req) => {
        const n = i++
        return {
          ...req,
          method: 'POST',
          path: '/api/v1/table/posts/insert',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${user(n).token}` },
          body: JSON.stringify({ values: { author_id: user(n).id, title: `Realtime post ${n}`, views: 0, published: true, tags: ['rt'] } })
        }
      }
    }]
  })
  return { reqPerSec: result.requests.total / result.duration, p99: result.latency.p99, requests: result.requests.total, failed: result.non2xx + result.errors + result.timeouts }
}

/**
 * `url`: a running fastbase server of the bench project; `fx`: the seeded users. Returns the numbers
 * (and prints them).
 */
export async function measureRealtime (url, fx, { seconds, connections }) {
  const without = await inserts(url, fx, seconds, connections)
  const counters = { change: 0, error: 0, gap: 0, last: 0 }
  const closers = []
  const opened = performance.now()
  for (const user of fx.users) {
    closers.push(...await Promise.all(Array.from({ length: SUBSCRIBERS_PER_USER }, () => subscribe(url, user.token, counters))))
  }
  const connectMs = performance.now() - opened
  const subscribers = closers.length
  try {
    const started = Date.now()
    const withSubs = await inserts(url, fx, seconds, connections)
    // Until the streams are quiet: the events still on their way are part of the fan-out.
    while (Date.now() - counters.last < 1000) await new Promise((resolve) => setTimeout(resolve, 200))
    const elapsed = (counters.last - started) / 1000
    const expected = (withSubs.requests - withSubs.failed) * subscribers
    const result = {
      subscribers,
      connectMs,
      writes: { without, with: withSubs, ratio: withSubs.reqPerSec / without.reqPerSec },
      fanout: { delivered: counters.change, expected, eventsPerSec: counters.change / elapsed, seconds: elapsed, overflows: counters.error, gaps: counters.gap }
    }
    console.log(`\nRealtime: ${subscribers} subscribers (${fx.users.length} users × ${SUBSCRIBERS_PER_USER}, posts' listRule per user), connected in ${connectMs.toFixed(0)} ms`)
    for (const run of [without, withSubs]) if (run.failed > 0) console.log(`  warning: ${run.failed} inserts failed`)
    console.log(`  inserts with 0 subscribers:     ${without.reqPerSec.toFixed(0)} req/s, p99 ${without.p99} ms`)
    console.log(`  inserts with ${subscribers} subscribers: ${withSubs.reqPerSec.toFixed(0)} req/s, p99 ${withSubs.p99} ms (${(result.writes.ratio * 100).toFixed(0)}% of the rate without)`)
    console.log(`  fan-out: ${counters.change} of ${expected} events delivered in ${elapsed.toFixed(1)} s = ${result.fanout.eventsPerSec.toFixed(0)} events/s; ${counters.error} streams dropped (overflow), ${counters.gap} gap events`)
    return result
  } finally {
    for (const close of closers) close()
  }
}

const FILTER_STREAMS_PER_USER = 1
const FILTERS_PER_STREAM = 10
const FILTER_WRITES_PER_SEC = 50
const HEALTH_EVERY_MS = 20

/** The n-th distinct filter: a views window or a word of the title, so each write matches a few of them. */
function filterOf (n, terms) {
  const window = n % 100
  const parts = [`views >= ${window} & views < ${window + 10}`, `title ~ '%w${n}w%'`]
  // Longer filters (the worst case a caller may send): more alternatives, each distinct.
  for (let i = 2; i < terms; i++) parts.push(`title ~ '%w${n}x${i}w%'`)
  return `published == true & (${parts.join(' | ')})`
}

/** Opens one stream with `subscriptions`; calls `onChange(record)` per change event. Resolves once `connect` came. */
async function filteredStream (url, token, subscriptions, onChange, counters) {
  const controller = new AbortController()
  const query = `subscribe=posts&where.posts=${encodeURIComponent(subscriptions[0])}`
  const res = await fetch(`${url}/api/v1/realtime?${query}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  if (res.status !== 200) throw new Error(`realtime: ${res.status} ${await res.text()}`)
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let connected
  const ready = new Promise((resolve) => { connected = resolve })
  ;(async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let at
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at)
          buffer = buffer.slice(at + 2)
          if (block.startsWith('event: connect\n')) connected(JSON.parse(block.slice(block.indexOf('data: ') + 6)).clientId)
          else if (block.startsWith('event: change\n')) onChange(JSON.parse(block.slice(block.indexOf('data: ') + 6)).record)
          else if (block.startsWith('event: error\n')) counters.error++
          else if (block.startsWith('event: gap\n')) counters.gap++
        }
      }
    } catch {}
  })()
  const clientId = await ready
  // The stream's other subscriptions: one POST replaces the set.
  const posted = await fetch(`${url}/api/v1/realtime`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ clientId, subscriptions: subscriptions.map((where) => ({ table: 'posts', where })) })
  })
  if (posted.status !== 200) throw new Error(`realtime subscribe: ${posted.status} ${await posted.text()}`)
  return () => controller.abort()
}

function percentile (sorted, p) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

/**
 * Many distinct filters on one table (decision D55): `streams × FILTERS_PER_STREAM` subscriptions with
 * distinct wheres of `terms` alternatives each, every one its own subscriber class, while writes come
 * at FILTER_WRITES_PER_SEC (paced, one insert each) and `/health` is asked every HEALTH_EVERY_MS.
 * Reports /health latency (the event loop's responsiveness) and event latency (write sent to event
 * read), p50 / p99 / max.
 */
export async function measureRealtimeFilters (url, fx, { seconds, terms = 2 }) {
  const counters = { error: 0, gap: 0 }
  const eventLatency = []
  const onChange = (record) => {
    const sent = Number(/ at (\d+)$/.exec(record.title)?.[1])
    if (sent > 0) eventLatency.push(Date.now() - sent)
  }
  const closers = []
  let n = 0
  for (const user of fx.users) {
    for (let s = 0; s < FILTER_STREAMS_PER_USER; s++) {
      const subscriptions = Array.from({ length: FILTERS_PER_STREAM }, () => filterOf(n++, terms))
      closers.push(await filteredStream(url, user.token, subscriptions, onChange, counters))
    }
  }
  const filters = n
  try {
    const health = []
    let writes = 0
    let failed = 0
    const pending = []
    const started = Date.now()
    const probe = setInterval(() => {
      const at = performance.now()
      pending.push(fetch(`${url}/api/v1/health`).then(async (res) => { await res.arrayBuffer(); health.push(performance.now() - at) }, () => { failed++ }))
    }, HEALTH_EVERY_MS)
    const writer = setInterval(() => {
      const i = writes++
      const user = fx.users[i % fx.users.length]
      pending.push(fetch(`${url}/api/v1/table/posts/insert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body: JSON.stringify({ values: { author_id: user.id, title: `Filtered post w${i % filters}w at ${Date.now()}`, views: i % 100, published: true } })
      }).then(async (res) => { await res.arrayBuffer(); if (res.status !== 200) failed++ }, () => { failed++ }))
    }, 1000 / FILTER_WRITES_PER_SEC)
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    clearInterval(probe)
    clearInterval(writer)
    await Promise.all(pending)
    // Events still on their way count (their latency is what it is): until none came for 3 s.
    let quiet = eventLatency.length
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 3000))
      if (eventLatency.length === quiet) break
      quiet = eventLatency.length
    }
    health.sort((a, b) => a - b)
    eventLatency.sort((a, b) => a - b)
    const ms = (v) => `${v.toFixed(0)} ms`
    const result = {
      filters,
      terms,
      writes,
      writesPerSec: writes / ((Date.now() - started) / 1000),
      failed,
      health: { count: health.length, p50: percentile(health, 0.5), p99: percentile(health, 0.99), max: health.at(-1) },
      events: { count: eventLatency.length, p50: percentile(eventLatency, 0.5), p99: percentile(eventLatency, 0.99), max: eventLatency.at(-1) },
      overflows: counters.error,
      gaps: counters.gap,
      loadAverage: loadavg()[0]
    }
    console.log(`\nRealtime filters: ${filters} distinct filters on posts (${closers.length} streams, ${terms} alternatives each), ${writes} inserts at ${FILTER_WRITES_PER_SEC}/s; load average ${result.loadAverage.toFixed(1)} (other processes share the CPUs)`)
    console.log(`  /health every ${HEALTH_EVERY_MS} ms: p50 ${ms(result.health.p50)}, p99 ${ms(result.health.p99)}, max ${ms(result.health.max)} (${health.length} probes)`)
    console.log(`  events: ${eventLatency.length} delivered, latency p50 ${ms(result.events.p50)}, p99 ${ms(result.events.p99)}, max ${ms(result.events.max)}`)
    console.log(`  ${failed} failed requests, ${counters.error} streams dropped, ${counters.gap} gap events`)
    return result
  } finally {
    for (const close of closers) close()
  }
}
