// The side of the IPC channel both benchmark servers share. Each server runs in its own process
// (forked by run.mjs) so that the load generator never shares an event loop with it.

import { PerformanceObserver } from 'node:perf_hooks'
import { optimizeFromNowOn } from '../dist/lib/cli/optimizer.js'

// The time this process has spent in garbage collection (main-thread pauses, as V8 reports them):
// part of its CPU time, reported beside it so that what a build allocates shows on its own.
let gcMillis = 0
new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMillis += entry.duration }).observe({ entryTypes: ['gc'] })

/** The options run.mjs passes as the one argument. */
export function serverOptions () {
  return JSON.parse(process.argv[2])
}

/** What the parent samples: resident memory (and its parts), the CPU time this process has used, and its GC time. */
function usage () {
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
  const { user, system } = process.cpuUsage()
  return { rss, heapUsed, heapTotal, external, arrayBuffers, cpuMicros: user + system, gcMicros: gcMillis * 1000 }
}

/**
 * Listens on a free loopback port, turns V8's optimizer on, and tells the parent `{ type: 'ready', port, startupMs, rss }`.
 * Afterwards answers `{ type: 'usage', id }` with `usage()` (sampled under load by the parent, and
 * read before and after a run to give the server's CPU time per request), and closes when the
 * parent disconnects (exits, or kills the channel).
 */
export async function serveOverIpc (app, startupMs) {
  await app.listen({ host: '127.0.0.1', port: 0 })
  // As scripts/start.mjs does once it listens, for the `--no-opt` of npm start's flags (decision D137).
  optimizeFromNowOn()
  process.on('message', (message) => {
    // A sample asked for just before the parent hung up has no one to go to.
    if (message?.type === 'usage' && process.connected) process.send({ type: 'usage', id: message.id, usage: usage() })
  })
  process.once('disconnect', () => {
    app.close().finally(() => process.exit(0))
  })
  process.send({ type: 'ready', port: app.server.address().port, startupMs, rss: process.memoryUsage.rss() })
}
