// Backups for superadmins (docs/backups.md): GET /backups lists the complete ones, POST /backups
// takes one now, GET /backups/{name} downloads its archive, DELETE /backups/{name} removes it.
// Restoring is the command's work (`fastbase restore`): it needs every instance stopped.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
// The `app.fastbase` declaration.
import type {} from '../plugins/types.js'
import type { TypeBoxApp } from './typebox.js'
import { ErrorSchema } from '../schemas/http/error.js'
import { BackupRecordSchema } from '../lib/backup/manifest.js'
import { callerOf } from '../plugins/auth-context.js'
import { requireAdmin } from './admin-access.js'

const SUPERADMINS = 'Only a superadmin can see or make backups'

const NameParams = Type.Object({
  name: Type.String({ maxLength: 100, description: 'A backup\'s name, e.g. `fastbase-20261126T030000000Z-1a2b3c`' })
})

// Its `$id` makes it one component of the API document (`backup`), referenced by the list and the new backup.
const BackupSchema = { ...BackupRecordSchema, $id: 'backup' }

const ListSchema = Type.Object({
  backups: Type.Array(BackupSchema, { description: 'Complete backups, newest first' }),
  keep: Type.Integer({ description: 'How many are kept (`backups.keep`)' }),
  schedule: Type.Union([Type.String(), Type.Null()], { description: 'The cron expression (`backups.schedule`), or null for on demand only' }),
  nextScheduled: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastSuccess: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The last backup any instance of this database stored' })
})

const accessErrors = { 401: ErrorSchema, 403: ErrorSchema }

export default async function backupRoutes (app: TypeBoxApp): Promise<void> {
  const backups = () => app.fastbase.backups

  app.get('/backups', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_backups',
      summary: 'Complete backups, newest first (superadmin)',
      'x-document': { errors: [401, 403, 500, 503] },
      security: [{ bearerAuth: [] }],
      response: { 200: ListSchema, ...accessErrors, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request), SUPERADMINS)
    const service = backups()
    const last = await service.lastSuccess()
    return {
      backups: await service.list(),
      keep: service.settings.keep,
      schedule: service.settings.schedule ?? null,
      nextScheduled: service.nextScheduled()?.toISOString() ?? null,
      lastSuccess: last === undefined ? null : new Date(last * 1000).toISOString()
    }
  })

  app.post('/backups', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_backup_create',
      summary: 'Take a backup now (superadmin)',
      'x-document': { errors: [401, 403, 409, 500, 503] },
      description: 'Snapshots the database while the server keeps serving (SQLite: `VACUUM INTO`; PostgreSQL: every table read as JSON lines in one read-only transaction), archives it with the local files, stores it in the backup storage and applies `backups.keep`. Answers when it is stored. 409 while another backup runs on this instance.',
      security: [{ bearerAuth: [] }],
      response: { 200: BackupSchema, ...accessErrors, 409: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request), SUPERADMINS)
    return await backups().create()
  })

  app.get('/backups/:name', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_backup_download',
      summary: 'Download a backup\'s archive (superadmin)',
      'x-document': {
        errors: [401, 403, 404, 500],
        responses: {
          200: {
            description: 'The archive: a gzipped tar of the database, the local files and manifest.json',
            headers: { 'X-Content-SHA256': { description: 'The archive\'s SHA-256 (hex), as its record names it', schema: { type: 'string' } } },
            content: { 'application/gzip': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/gzip' } } }
          }
        }
      },
      description: 'A gzipped tar: the database, the local files and `manifest.json`. Restore it with `fastbase restore <file>`.',
      security: [{ bearerAuth: [] }],
      params: NameParams,
      response: {
        200: Type.String({ format: 'binary', description: 'The archive (application/gzip)' }),
        ...accessErrors,
        404: ErrorSchema
      }
    }
    // Typed here, not inferred from the schemas: the reply is a stream.
  }, async (request: FastifyRequest<{ Params: Static<typeof NameParams> }>, reply: FastifyReply) => {
    requireAdmin(callerOf(request), SUPERADMINS)
    const { record, stream } = await backups().open(request.params.name)
    void reply.header('content-type', 'application/gzip')
    void reply.header('content-length', String(record.archive.size))
    void reply.header('content-disposition', `attachment; filename="${record.name}.tar.gz"`)
    void reply.header('x-content-sha256', record.archive.sha256)
    return await reply.send(stream)
  })

  app.delete('/backups/:name', {
    schema: {
      tags: ['admin'],
      operationId: 'admin_backup_delete',
      summary: 'Delete a backup (superadmin)',
      'x-document': { errors: [401, 403, 404, 500] },
      security: [{ bearerAuth: [] }],
      params: NameParams,
      response: { 200: Type.Object({ deleted: Type.String() }), ...accessErrors, 404: ErrorSchema }
    }
  }, async (request) => {
    requireAdmin(callerOf(request), SUPERADMINS)
    await backups().remove(request.params.name)
    return { deleted: request.params.name }
  })
}
