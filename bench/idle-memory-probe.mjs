// Preloaded by bench/idle-memory.mjs (NODE_OPTIONS=--import) into `npm start`'s processes: in the
// server's (the one running scripts/start.mjs) SIGUSR2 writes its V8 heap figures as JSON to
// FASTBASE_IDLE_PROBE_OUT. npm's own process gets it too and does nothing with it.
import { renameSync, writeFileSync } from 'node:fs'
import { getHeapSpaceStatistics } from 'node:v8'

const out = process.env.FASTBASE_IDLE_PROBE_OUT
if (out !== undefined && process.argv[1]?.endsWith('scripts/start.mjs')) {
  process.on('SIGUSR2', () => {
    const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
    // The young generation's reserved size: what --max-semi-space-size bounds.
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size
    // Written whole then renamed, so the reader never sees half a file.
    writeFileSync(`${out}.tmp`, JSON.stringify({ heapUsed, heapTotal, external, arrayBuffers, newSpace }))
    renameSync(`${out}.tmp`, out)
  })
}
