// Where a server's time per request goes, timed on Node's own objects so that fastbase and the
// ceiling are timed at the same places (`npm run bench -- --items-only --segments`, bench/items.mjs).
// Loaded with `node -r` into each server. Sampled CPU profiles (`--cpu-prof`) charge a native call
// or a system call with the samples its signal lands in: they put a SQLite edit's statement at 34 µs
// a request where timing it says 12. These are wall times of synchronous stretches: on a server
// pinned to a CPU of its own (the SQLite runs) they are its CPU time; unpinned (PostgreSQL's) they
// also hold whatever preempted it. The stretches nest (see `totals`).
//
// On SIGWINCH the totals so far are written, synchronously, to segmentsFile(pid) with a sequence
// number the reader waits for: a signal whose default is to do nothing, which neither Node (SIGUSR1
// starts its inspector) nor fastify-cli's close-with-grace (SIGUSR2 closes the server) takes.
'use strict'
const http = require('node:http')
const net = require('node:net')
const { writeFileSync } = require('node:fs')
const { segmentsFile } = require('./segments-file.cjs')

/**
 * head: the request's 'request' event (routing, onRequest hooks, setting up the body's read);
 * body: its body's 'end' event (parsing, validation, the handler, and the answer when the handler
 * gives it at once, its socket write included); write: socket writes (the answer leaving, almost
 * all of it the kernel's loopback send); finish: the answer's 'finish' event.
 */
const totals = { head: 0, body: 0, write: 0, finish: 0 }
let requests = 0
let seq = 0

function timed (proto, method, segment, only) {
  const original = proto[method]
  proto[method] = function (...args) {
    if (only !== undefined && args[0] !== only) return original.apply(this, args)
    const start = performance.now()
    try {
      return original.apply(this, args)
    } finally {
      totals[segment] += performance.now() - start
      if (segment === 'head') requests++
    }
  }
}

timed(http.Server.prototype, 'emit', 'head', 'request')
timed(http.IncomingMessage.prototype, 'emit', 'body', 'end')
timed(http.ServerResponse.prototype, 'emit', 'finish', 'finish')
timed(net.Socket.prototype, '_writeGeneric', 'write')

process.on('SIGWINCH', () => {
  seq++
  writeFileSync(segmentsFile(process.pid), JSON.stringify({ seq, requests, ms: totals }))
})
