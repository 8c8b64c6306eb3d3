// Search cost (decision D41), measured by `npm run bench` (bench/run.mjs, `--search-only` for this
// alone) against a fastbase server in its own process: a table of SEARCH_ROWS texts of ~30 words
// drawn from a Zipf-distributed vocabulary (a few words occur in almost every row, as "the" does),
// half of them hidden from anonymous callers by the listRule. Each search the grammar accepts is
// timed one request at a time (p50, p99), without and with an order; then /health is timed while
// WORST_CONCURRENCY clients loop over the slowest searches.
import { ADMIN_TOKEN, JWT_SECRET, openFastbase } from './project.mjs'
import { MAX_SEARCH_TERMS } from '../dist/lib/search/fts-query.js'
import { DEFAULT_LIMITS } from '../dist/lib/limits.js'

export const SEARCH_ROWS = 100_000
const WORDS_PER_ROW = 30
const VOCABULARY = 5000
const INSERT_BATCH = 2000
const WORST_CONCURRENCY = 4
// Requests per search: the 99th percentile of fewer than 100 is the slowest one.
export const SEARCH_RUNS = 200

/** One table, `docs`: anonymous callers list the published half; `body` is searched. */
export function searchConfig () {
  return {
    appName: 'fastbase search bench',
    appUrl: 'http://127.0.0.1',
    jwtSecret: JWT_SECRET,
    rateLimit: false,
    tables: [{
      name: 'docs',
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'body', type: 'text', sqlType: 'text', notNull: true }
      ],
      fullTextSearch: { fields: ['body'] },
      extensions: [{ name: 'rules', listRule: 'published == true', viewRule: 'published == true', createRule: null, updateRule: null, deleteRule: null }]
    }, {
      // The same rows under a substring index (decision D103): its searches cost differently.
      name: 'grams',
      fields: [
        { name: 'id', type: 'text', sqlType: 'text', primary: true, usage: 'record_uid' },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true },
        { name: 'body', type: 'text', sqlType: 'text', notNull: true }
      ],
      fullTextSearch: { fields: ['body'], tokenize: 'trigram' },
      extensions: [{ name: 'rules', listRule: 'published == true', viewRule: 'published == true', createRule: null, updateRule: null, deleteRule: null }]
    }]
  }
}

/** Made-up words (syllables), the most frequent first; deterministic. */
function vocabulary () {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'po', 'si', 'be', 'da', 'fa', 'go', 'hu', 'ji', 've', 'zo', 'an', 'el', 'or', 'us']
  return Array.from({ length: VOCABULARY }, (_, i) => {
    let word = ''
    let n = i
    do { word += syllables[n % syllables.length]; n = Math.floor(n / syllables.length) } while (n > 0)
    return word + (i % 7 === 0 ? 's' : '')
  })
}

/** Rows of ~30 words, word i drawn with probability proportional to 1/(i+1). */
function* texts (words) {
  let seed = 42
  const random = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff }
  const cumulative = []
  let sum = 0
  for (let i = 0; i < words.length; i++) cumulative.push(sum += 1 / (i + 1))
  const pick = () => {
    const x = random() * sum
    let lo = 0
    let hi = words.length - 1
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cumulative[mid] < x) lo = mid + 1; else hi = mid }
    return words[lo]
  }
  for (;;) yield Array.from({ length: WORDS_PER_ROW }, pick).join(' ')
}

/** Creates the table and its rows through fastbase (admin inserts), then closes. */
export async function seedSearch (databaseUrl, dataDir) {
  const app = await openFastbase(searchConfig(), databaseUrl, dataDir)
  try {
    const source = texts(vocabulary())
    for (let i = 0; i < SEARCH_ROWS; i += INSERT_BATCH) {
      const values = Array.from({ length: INSERT_BATCH }, (_, j) => ({ id: `d${String(i + j).padStart(6, '0')}`, published: (i + j) % 2 === 0, body: source.next().value }))
      for (const table of ['docs', 'grams']) {
        const res = await app.inject({ method: 'POST', url: `/api/v1/table/${table}/insert`, payload: { values, returning: [] }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
        if (res.statusCode !== 200) throw new Error(`seeding search: ${res.statusCode} ${res.body}`)
      }
    }
    // PostgreSQL plans from table statistics, which autovacuum gathers some time after a bulk load;
    // without them it guesses a few matching rows and picks plans made for a few. Autovacuum would
    // also vacuum the new rows some time later, in the middle of the measurements: done here, as on
    // a table in steady state.
    if (app.fastbase.dialect.name === 'postgres') await app.fastbase.db.raw('VACUUM ANALYZE "docs", "grams"')
  } finally {
    await app.close()
  }
}

/** The searches timed: the most and least common words, prefixes, phrases, OR, NOT, groups, the longest accepted. */
function searches () {
  const w = vocabulary()
  return [
    w[0], w[1000], `${w[0]} ${w[1]}`, `${w[0]}*`, `${w[0].slice(0, 2)}*`, `"${w[0]} ${w[1]}"`, `"${w[0]} ${w[1]}"*`,
    `"${w[0]}"* OR "${w[1]}"*`, `${w[0]} -${w[1]}`, `(${w[0]} OR ${w[2]}) -(${w[1]} OR ${w[3]})`,
    // Every word frequent, prefixes and ORs, none contained in another: the most words the limits let
    // one search hold (MAX_SEARCH_TERMS).
    Array.from({ length: MAX_SEARCH_TERMS }, (_, i) => i % 2 === 0 ? `${w[i / 2].slice(0, 2)}*` : w[(i - 1) / 2 + 8]).join(' OR ')
  ]
}

function percentile (sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

let requestNumber = 0

/**
 * `url` made a request no earlier one was: a list's `where` gets `id != '~<n>'` (true of every row),
 * so its total is counted each time as a caller varying its requests would have it counted, never
 * one kept from the same request before (decision D125).
 */
function unrepeated (url) {
  const u = new URL(url)
  if (!u.pathname.endsWith('/list')) return url
  const where = u.searchParams.get('where')
  const fresh = `id != '~${requestNumber++}'`
  u.searchParams.set('where', where === null ? fresh : `(${where}) & ${fresh}`)
  return u.toString()
}

/** Milliseconds `url` took; a 503 (statement timeout, readers busy) is allowed when `refusals` counts it. */
async function timed (url, refusals) {
  const started = performance.now()
  const res = await fetch(unrepeated(url))
  const body = await res.text()
  if (res.status === 503 && refusals !== undefined) refusals.count++
  else if (res.status !== 200) throw new Error(`search bench: ${res.status} ${body.slice(0, 300)} for ${url}`)
  return performance.now() - started
}

/** p50/p99 of `runs` requests to `url`, one at a time, after two unmeasured. */
async function latency (url, runs) {
  await timed(url)
  await timed(url)
  const samples = []
  for (let i = 0; i < runs; i++) samples.push(await timed(url))
  samples.sort((a, b) => a - b)
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples[samples.length - 1] }
}

/** Times every search (anonymous list with total, 20 rows, best match first and `order=id`), then /health under the worst. */
export async function measureSearch (base, { runs = SEARCH_RUNS, seconds = 10 } = {}) {
  const results = []
  for (const text of searches()) {
    for (const order of [undefined, 'id']) {
      const params = new URLSearchParams({ where: `docs @@ '${text}'`, limit: '20', ...(order === undefined ? {} : { order }) })
      const url = `${base}/api/v1/table/docs/list?${params}`
      results.push({ search: text, order: order ?? 'rank', ...(await latency(url, runs)) })
    }
  }
  const worst = [...results].sort((a, b) => b.p99 - a.p99).slice(0, WORST_CONCURRENCY)
  const urls = worst.map((r) => `${base}/api/v1/table/docs/list?${new URLSearchParams({ where: `docs @@ '${r.search}'`, limit: '20', ...(r.order === 'rank' ? {} : { order: r.order }) })}`)
  const h = await healthWhileLooping(base, urls, seconds)
  return {
    rows: SEARCH_ROWS,
    searches: results,
    healthUnderWorst: { concurrent: worst.map((r) => `${r.search} (${r.order})`), searches: h.sent, refused: h.refused, samples: h.samples, p50: h.p50, p99: h.p99, max: h.max }
  }
}

/**
 * `/health` every 20 ms for `seconds` while one client per URL loops over it. Several slow requests
 * at once may outlast limits.statementTimeout: those answer 503, counted as refused.
 */
async function healthWhileLooping (base, urls, seconds) {
  let running = true
  const refusals = { count: 0 }
  let sent = 0
  const loops = urls.map(async (url) => {
    while (running) { await timed(url, refusals); sent++ }
  })
  const health = []
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    health.push(await timed(`${base}/api/v1/health`))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  running = false
  await Promise.all(loops)
  health.sort((a, b) => a - b)
  return { sent, refused: refusals.count, samples: health.length, p50: percentile(health, 50), p99: percentile(health, 99), max: health[health.length - 1] }
}

/**
 * The ten 3-letter substrings that occur in the most rows (by Zipf weight), none repeated: the
 * substring search (decision D103) that matches the most and so costs the most.
 */
function frequentTrigrams (words) {
  const weight = new Map()
  words.forEach((word, i) => {
    for (const gram of new Set(Array.from({ length: Math.max(0, word.length - 2) }, (_, k) => word.slice(k, k + 3)))) weight.set(gram, (weight.get(gram) ?? 0) + 1 / (i + 1))
  })
  return [...weight].sort((a, b) => b[1] - a[1]).slice(0, MAX_SEARCH_TERMS).map(([gram]) => gram)
}

/**
 * The most a request may search (decision D85): `limits.searches` searches of MAX_SEARCH_TERMS frequent
 * words and 2-letter prefixes (on `grams`, frequent 3-letter substrings), placed where they cost most:
 * required by the where (it drives the statements), OR-ed with another condition (it does not: each
 * statement builds the set of every match), in an aggregate over every visible row, in the select list
 * of a list.
 */
function worstRequests () {
  const w = vocabulary()
  const words = Array.from({ length: MAX_SEARCH_TERMS }, (_, i) => i % 2 === 0 ? `${w[i / 2].slice(0, 2)}*` : w[(i - 1) / 2 + 8])
  return [['docs', words], ['grams', frequentTrigrams(w)]].flatMap(([table, terms]) => {
    const searches = Array.from({ length: DEFAULT_LIMITS.searches }, () => `${table} @@ '${terms.join(' OR ')}'`)
    const or = searches.join(' | ')
    const what = table === 'docs' ? `${terms.length} words` : `${terms.length} substrings (trigram)`
    return [
      { table, name: `${DEFAULT_LIMITS.searches} search(es) of ${what}, required by the where`, query: { where: searches.join(' & ') } },
      { table, name: `${what}: the same OR-ed with another condition`, query: { where: `${or} | id == 'd000001'` } },
      { table, name: `${what}: the same OR-ed with another condition, order=id`, query: { where: `${or} | id == 'd000001'`, order: 'id' } },
      { table, name: `${what}: the same in an aggregate of the select list`, path: 'select', query: { select: searches.map((q, i) => `count(${q}) as c${i}`).join(', ') } },
      { table, name: `${what}: the same as a column of the select list`, query: { select: ['id', ...searches.map((q, i) => `(${q}) as s${i}`)].join(', ') } }
    ]
  })
}

/** The worst requests the limits accept, one at a time, then /health while WORST_CONCURRENCY clients loop over the slowest. */
export async function measureWorstAccepted (base, { runs = SEARCH_RUNS, seconds = 10 } = {}) {
  const urlOf = (r) => `${base}/api/v1/table/${r.table}/${r.path ?? 'list'}?${new URLSearchParams({ limit: '20', ...r.query })}`
  const results = []
  for (const r of worstRequests()) results.push({ request: r.name, query: r.query, ...(await latency(urlOf(r), runs)) })
  const worst = [...results].sort((a, b) => b.p99 - a.p99)[0]
  const request = worstRequests().find((r) => r.name === worst.request)
  const h = await healthWhileLooping(base, Array.from({ length: WORST_CONCURRENCY }, () => urlOf(request)), seconds)
  return {
    rows: SEARCH_ROWS,
    requests: results,
    healthUnderWorst: { request: worst.request, concurrent: WORST_CONCURRENCY, ...h }
  }
}

export function reportWorstAccepted (worst) {
  console.log(`\nThe worst requests the limits accept, on ${worst.rows} rows (anonymous, limit 20), one at a time:`)
  for (const r of worst.requests) console.log(`  p50 ${r.p50.toFixed(1).padStart(7)} ms  p99 ${r.p99.toFixed(1).padStart(7)} ms  max ${r.max.toFixed(1).padStart(7)} ms  ${r.request}`)
  const h = worst.healthUnderWorst
  console.log(`/health while ${h.concurrent} clients loop over "${h.request}": p50 ${h.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} ms, max ${h.max.toFixed(1)} ms (${h.samples} samples); ${h.sent} requests, ${h.refused} answered 503`)
}

/** Prints the figures. */
export function reportSearch (search) {
  console.log(`\nSearch on ${search.rows} rows (anonymous list, limit 20, total counted), one request at a time:`)
  for (const r of search.searches) console.log(`  ${r.order.padEnd(4)} p50 ${r.p50.toFixed(1).padStart(7)} ms  p99 ${r.p99.toFixed(1).padStart(7)} ms  max ${r.max.toFixed(1).padStart(7)} ms  ${r.search.length > 60 ? r.search.slice(0, 57) + '...' : r.search}`)
  const h = search.healthUnderWorst
  console.log(`/health during ${h.concurrent.length} concurrent worst searches: p50 ${h.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} ms, max ${h.max.toFixed(1)} ms (${h.samples} samples); ${h.searches} searches, ${h.refused} answered 503`)
}
