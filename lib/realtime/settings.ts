// The `realtime` config block with its defaults.
import type { DatabaseSettings } from '../../schemas/config.js'
import type { RealtimeSettings } from './hub.js'

export const REALTIME_DEFAULTS = {
  heartbeatSeconds: 25,
  sessionCheckSeconds: 30,
  maxSubscriptions: 32,
  maxConnectionsPerUser: 10,
  queueBytes: 1024 * 1024,
  maxPending: 100_000,
  maxStreams: 10_000,
  maxClassesPerTable: 1000,
  // One address takes at most 1% of the streams and a tenth of a table's classes; one user, what one
  // stream's subscriptions can ask for (decision D89).
  maxStreamsPerAddress: 100,
  maxClassesPerAddress: 100,
  maxClassesPerUser: 32
}

export function realtimeSettings (config: DatabaseSettings['realtime']): RealtimeSettings & { enabled: boolean } {
  const c = config ?? {}
  return {
    enabled: c.enabled ?? true,
    heartbeatMs: Math.round((c.heartbeatSeconds ?? REALTIME_DEFAULTS.heartbeatSeconds) * 1000),
    sessionCheckMs: Math.round((c.sessionCheckSeconds ?? REALTIME_DEFAULTS.sessionCheckSeconds) * 1000),
    maxSubscriptions: c.maxSubscriptions ?? REALTIME_DEFAULTS.maxSubscriptions,
    maxConnections: c.maxConnectionsPerUser ?? REALTIME_DEFAULTS.maxConnectionsPerUser,
    queueBytes: c.queueBytes ?? REALTIME_DEFAULTS.queueBytes,
    maxPending: REALTIME_DEFAULTS.maxPending,
    maxStreams: c.maxStreams ?? REALTIME_DEFAULTS.maxStreams,
    maxClassesPerTable: c.maxClassesPerTable ?? REALTIME_DEFAULTS.maxClassesPerTable,
    maxStreamsPerAddress: c.maxStreamsPerAddress ?? REALTIME_DEFAULTS.maxStreamsPerAddress,
    maxClassesPerAddress: c.maxClassesPerAddress ?? REALTIME_DEFAULTS.maxClassesPerAddress,
    maxClassesPerUser: c.maxClassesPerUser ?? REALTIME_DEFAULTS.maxClassesPerUser
  }
}
