// Realtime cost, measured by `npm run bench` (bench/run.mjs) against a fastbase server in its own
// process: write throughput (the insert scenario, autocannon) with no subscriber and with 1,000
// subscribers connected, and fan-out: change events per second delivered to those 1,000 subscribers
// (10 streams for each of the 100 users, so the posts' listRule `published == true | author_id ==
// auth.uid` is evaluated for 100 subscriber classes per change) while the inserts run.
// The subscribers are real HTTP clients in this process (fetch); each counts `event: change` frames.
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
