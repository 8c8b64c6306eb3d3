// fastbase inside a host app that builds on it: a route that authenticates with fastbase and acts as
// its caller, record hooks (a slug set before insert, a welcome email after sign-up), and an action
// written in code. docs/extending.md walks through it.
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import fastbase, { defineAction, FastbaseError, baseFields, authFields, sql, sqlValue } from 'fastbase'

const config = {
  jwtSecret: '$JWT_SECRET',
  appUrl: process.env.APP_URL ?? 'http://localhost:3000',
  appName: 'Blog',
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: '$JWT_SECRET_USERS' },
        { name: 'rules', listRule: 'auth.uid == id', viewRule: 'auth.uid == id', createRule: 'true', updateRule: 'auth.uid == id', deleteRule: null }
      ]
    },
    {
      name: 'posts',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id' } },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true, check: sql`length(title) <= 200` },
        // Set by the beforeInsert hook below, never by callers.
        { name: 'slug', type: 'text', sqlType: 'text', unique: true, noInsert: true, noUpdate: true },
        { name: 'likes', type: 'integer', sqlType: 'integer', notNull: true, default: sqlValue(0), noInsert: true, noUpdate: true }
      ],
      extensions: [{
        name: 'rules',
        listRule: 'true',
        viewRule: 'true',
        createRule: 'auth.uid != null & owner == auth.uid',
        updateRule: 'owner == auth.uid',
        deleteRule: 'owner == auth.uid'
      }]
    }
  ]
}

// An action in code: anyone signed in may like a post once per call; `likes` is noUpdate for
// callers, so the handler writes it as the system, in the action's transaction.
const like = defineAction({
  name: 'like',
  description: 'Adds a like to a post',
  requireAuth: true,
  params: Type.Object({ id: Type.String({ description: 'The post' }) }),
  result: Type.Object({ id: Type.String(), likes: Type.Integer() }),
  handler: async ({ params, caller, tables }) => {
    // The caller must be able to see the post (404 otherwise); its id, as stored, names it below.
    const post = await tables.posts.view({ id: params.id, select: ['id'] }, { as: caller })
    const [liked] = await tables.posts.update({ where: 'id == {:id}', params: { id: post.id }, set: { likes: 'likes + 1' }, returning: ['id', 'likes'] }, { as: 'system' })
    return liked
  }
})

const app = Fastify({ logger: true })
await app.register(fastbase, {
  config,
  databaseUrl: process.env.DATABASE_URL,
  dataDir: process.env.DATA_DIR ?? './data',
  actions: [like]
})

// Before insert: a post's slug comes from its title (inside the insert's transaction).
app.fastbase.hooks.on('posts', 'beforeInsert', (event) => {
  const slug = String(event.values.title).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
  if (slug === '') throw new FastbaseError(400, 'FB_ERR_BAD_REQUEST', 'The title needs a letter or a digit')
  event.values.slug = `${slug}-${Date.now().toString(36)}`
})

// After sign-up (committed): a welcome email. Without SMTP_URL it lands in <dataDir>/outbox as .eml.
app.fastbase.hooks.on('users', 'afterSignUp', async (event) => {
  await app.fastbase.sendEmail({
    to: String(event.record.email),
    subject: 'Welcome to the blog',
    text: `Hello ${String(event.record.name ?? event.record.username)}, welcome!`,
    html: '<p>Welcome!</p>'
  })
})

// A host route: the caller as fastbase sees them, and their posts through the in-process API
// (their rules apply: `as` is the request).
app.get('/me', { preHandler: app.fastbase.authenticate({ require: 'user' }) }, async (request) => {
  const caller = app.fastbase.callerOf(request)
  const posts = await app.fastbase.tables.posts.list({ where: 'owner == auth.uid', select: ['id', 'title', 'slug', 'likes'], order: 'created' }, { as: request })
  return { uid: caller.uid, posts: posts.items }
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.FASTIFY_ADDRESS ?? '127.0.0.1' })
