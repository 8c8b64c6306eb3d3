// `npm start` leaves V8's young generation at Node's default bound (2 × 16 MiB), where requests'
// short-lived objects die without being promoted and collected again (decision D144), and gives the
// memory back when the server is quiet. V8 grows the young generation as a start or a burst of
// requests needs it and never shrinks it by itself while nothing is collected; a full collection
// after some seconds of allocating little does shrink it (V8 sizes it by the allocation rate of its
// last seconds). So once a second the server asks whether its event loop was busy, and after
// QUIET_SECONDS of quiet with a young generation larger than the last one a collection left, it
// collects once: on an idle server, ~20 ms once, never while requests come.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/** What the trim reads and does, given apart so its decisions can be tested without V8. */
export interface YoungGenerationProbe {
  /** Was the event loop busy since the last tick? */
  busy: () => boolean
  /** The young generation's size now (bytes V8 holds for it). */
  youngBytes: () => number
  /** A full collection. */
  collect: () => void
}

/** Quiet seconds before a collection: V8 weighs the allocation rate of the last five. */
export const QUIET_SECONDS = 6
/** A collection that gave nothing back doubles the wait before the next one, up to this. */
const MAX_QUIET_SECONDS = 600

/** The trim's decisions, one tick a second. */
export class YoungGenerationTrim {
  private quiet = 0
  private wait = QUIET_SECONDS
  /** The size the last collection that shrank left: nothing to give back at or below it. */
  private floor = 0

  constructor (private readonly probe: YoungGenerationProbe) {}

  /** One second passed; true when it collected. */
  tick (): boolean {
    if (this.probe.busy()) {
      this.quiet = 0
      return false
    }
    if (++this.quiet < this.wait) return false
    this.quiet = 0
    const before = this.probe.youngBytes()
    if (before <= this.floor) return false
    this.probe.collect()
    const after = this.probe.youngBytes()
    if (after < before) {
      this.floor = after
      this.wait = QUIET_SECONDS
    } else {
      this.wait = Math.min(this.wait * 2, MAX_QUIET_SECONDS)
    }
    return true
  }
}

/** The event loop counts as busy above this share of a second spent running code. */
const BUSY_SHARE = 0.05

/** The probe of this process: its event loop's utilization, V8's new space, and a full collection. */
export function processProbe (): YoungGenerationProbe {
  let last: EventLoopUtilization = performance.eventLoopUtilization()
  let gc: (() => void) | undefined
  return {
    busy () {
      const now = performance.eventLoopUtilization()
      const share = performance.eventLoopUtilization(now, last).utilization
      last = now
      return share > BUSY_SHARE
    },
    youngBytes: () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
    collect () {
      // V8 gives a context made while --expose-gc is set a `gc` function: the server's own global
      // never gets one.
      if (gc === undefined) {
        setFlagsFromString('--expose-gc')
        const found: unknown = runInNewContext('gc')
        setFlagsFromString('--no-expose-gc')
        // Without one (a V8 that no longer takes the flag late) the trim does nothing: a server never stops for it.
        gc = typeof found === 'function' ? () => Reflect.apply(found, undefined, []) : () => {}
      }
      gc()
    }
  }
}

/** Trims this process's young generation when it is quiet, from now on (the timer never keeps it alive). */
export function trimYoungGenerationWhenQuiet (): void {
  const trim = new YoungGenerationTrim(processProbe())
  setInterval(() => { trim.tick() }, 1000).unref()
}
