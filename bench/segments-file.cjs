// Where a server loaded with bench/segments.cjs writes its totals: apart from segments.cjs, so the
// bench reads them without loading the timers into its own process (its load generator).
'use strict'
const { tmpdir } = require('node:os')
const { join } = require('node:path')

exports.segmentsFile = (pid) => join(tmpdir(), `fastbase-bench-segments-${pid}.json`)
