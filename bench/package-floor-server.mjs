// One start for bench/package-floor.mjs: imports the packages named, serves one route on a bare
// Fastify with an in-memory better-sqlite3 database, and after `settle` seconds prints its resident set.
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import Database from 'better-sqlite3'
import { optimizeFromNowOn } from '../dist/lib/cli/optimizer.js'

const [settle, ...packages] = process.argv.slice(2)
for (const name of packages) await import(name)
const db = new Database(':memory:')
const app = Fastify()
app.get('/', async () => db.prepare('SELECT 1 AS one').get())
await app.listen({ port: 0, host: '127.0.0.1' })
// As scripts/start.mjs does once it listens, for the `--no-opt` of npm start's flags (decision D137).
optimizeFromNowOn()
await app.inject({ url: '/' })
await sleep(Number(settle) * 1000)
const status = readFileSync('/proc/self/status', 'utf8')
const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)[1]) * 1024
process.stdout.write(JSON.stringify({ rss: kib('VmRSS'), rssAnon: kib('RssAnon'), rssFile: kib('RssFile'), heapUsed: process.memoryUsage().heapUsed }))
await app.close()
db.close()
