// Running in production: this instance's liveness row (a restore refuses while it is fresh,
// lib/backup/liveness.ts) and the backup service (lib/backup/service.ts): on demand through the
// admin endpoints, on the config's schedule, into the backup storage. Registered after the schema
// plugin: the tables it writes exist by then.
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { createStorage, localStorageRoot } from '../lib/storage/index.js'
import { heartbeat as createHeartbeat } from '../lib/backup/liveness.js'
import { backupSettings } from '../lib/backup/settings.js'
import { createBackupService } from '../lib/backup/service.js'

const backups: FastifyPluginAsync = async (app) => {
  const { config, options, db, dialect } = app.fastbase
  const heartbeat = createHeartbeat(db, app.log)
  const settings = backupSettings(config.backups)
  const destination = await createStorage(settings.storage, options.dataDir)
  app.fastbase.backups = createBackupService({
    source: {
      knex: db,
      dialect: dialect.name,
      databaseUrl: options.databaseUrl,
      dataDir: options.dataDir,
      appName: config.appName ?? '',
      filesRoot: settings.files ? localStorageRoot(config.storage, options.dataDir) : undefined,
      holdDeletions: app.fastbase.storage.holdDeletions
    },
    destination,
    settings,
    instance: heartbeat.id,
    log: app.log
  })
  if (settings.schedule !== undefined) app.log.info({ schedule: settings.schedule, next: app.fastbase.backups.nextScheduled()?.toISOString() }, 'fastbase: backups scheduled')
  // The row only once every plugin has loaded: a start that fails later (a refused pooler URL, a
  // host's plugin) leaves nothing a restore or `migrate --apply` would take for a running server.
  app.addHook('onReady', heartbeat.start)
  // preClose (it runs after a failed start too): the database is still open for the running backup
  // and the row's removal.
  app.addHook('preClose', async () => {
    await app.fastbase.backups.close()
    await heartbeat.stop()
  })
  app.addHook('onClose', async () => { await destination.close() })
}

export default fp(backups, { fastify: '5.x', name: 'fastbase-backups', dependencies: ['fastbase-schema', 'fastbase-files'] })
