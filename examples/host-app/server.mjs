import Fastify from 'fastify'
import fastbase, { sql, sqlValue, baseFields } from 'fastbase'

const app = Fastify({ logger: true })
await app.register(fastbase, {
  config: {                                  // or a path: './fastbase.config.ts'
    jwtSecret: '$JWT_SECRET',
    appUrl: 'https://example.com',
    tables: [{
      name: 'notes',
      autoSetUid: true,
      // Anyone may write: bound the text, so no one can make every page huge.
      fields: [...baseFields, { name: 'body', type: 'text', sqlType: 'text', notNull: true, default: sqlValue(''), check: sql`length(body) <= 10000` }],
      extensions: [{ name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }]
    }]
  },
  databaseUrl: process.env.DATABASE_URL,     // postgres://user@host:5432/app; default: SQLite in dataDir
  dataDir: './data',
  adminServiceToken: process.env.ADMIN_SERVICE_TOKEN
})
await app.listen({ port: Number(process.env.PORT ?? 3000) })
// app.fastbase.db is the Knex instance, app.fastbase.tables the in-process table API (docs/extending.md).
