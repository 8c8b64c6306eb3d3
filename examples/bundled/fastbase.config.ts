// The bundled example project: a small blog. fastbase serves it when no config is given.
// Secrets are `$NAME` references to environment variables (JWT_SECRET, JWT_SECRET_USERS). When
// this bundled example runs outside production without them, fastbase fills in public
// development values and logs a warning; set both variables before exposing the server.
import { authFields, baseFields, defineConfig } from '../../lib/config/helpers.js'

export default defineConfig({
  appName: 'Fastbase Blog',
  appUrl: 'http://localhost:3000',
  jwtSecret: '$JWT_SECRET',
  tables: [
    {
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        {
          name: 'auth',
          jwtSecret: '$JWT_SECRET_USERS',
          jwtTokenDuration: 3600,
          maxTokenRefresh: 5,
          passwordConfirmSuffix: 'Confirm'
        },
        {
          name: 'rules',
          // Anyone may sign up; a user sees and edits only their own record. Deletes stay admin-only.
          // `role` becomes auth.role: nobody picks their own at sign-up or changes it later.
          listRule: 'auth.uid == id',
          viewRule: 'auth.uid == id',
          createRule: "role == null | role == 'user'",
          updateRule: 'auth.uid == id & new.role == role',
          deleteRule: null
        }
      ]
    },
    {
      name: 'posts',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'author_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true },
        { name: 'body', type: 'editor', sqlType: 'text' },
        { name: 'published', type: 'bool', sqlType: 'boolean', notNull: true, default: { l: false } },
        { name: 'tags', type: 'json', sqlType: 'json' },
        { name: 'views', type: 'integer', sqlType: 'integer', notNull: true, default: { l: 0 } }
      ],
      indexes: [{ fields: ['author_id'] }],
      extensions: [
        {
          name: 'rules',
          // Published posts are public; drafts are visible to their author only.
          listRule: 'published == true | author_id == auth.uid',
          viewRule: 'published == true | author_id == auth.uid',
          createRule: 'auth.uid != null & author_id == auth.uid',
          updateRule: 'author_id == auth.uid',
          deleteRule: 'author_id == auth.uid'
        }
      ]
    },
    {
      name: 'comments',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'post_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'posts', column: 'id', onDelete: 'CASCADE' } },
        { name: 'author_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'body', type: 'text', sqlType: 'text', notNull: true }
      ],
      indexes: [{ fields: ['post_id'] }],
      extensions: [
        {
          name: 'rules',
          listRule: 'true',
          viewRule: 'true',
          createRule: 'auth.uid != null & author_id == auth.uid',
          updateRule: 'author_id == auth.uid',
          deleteRule: 'author_id == auth.uid'
        }
      ]
    },
    {
      // Works without accounts: anyone may read and sign; only admins may edit or delete.
      name: 'guestbook',
      autoSetUid: true,
      fields: [
        ...baseFields,
        // Anonymous callers write this table: every text is bounded, so no answer can be made huge.
        { name: 'name', type: 'text', sqlType: 'text', notNull: true, check: { q: 'length(name) <= 100' } },
        { name: 'message', type: 'text', sqlType: 'text', notNull: true, check: { q: 'length(message) <= 500' } },
        { name: 'rating', type: 'integer', sqlType: 'integer', check: { q: 'rating BETWEEN 1 AND 5' } },
        { name: 'meta', type: 'json', sqlType: 'json', check: { q: 'length(CAST(meta AS text)) <= 2000' } },
        { name: 'photo', type: 'file', sqlType: 'text' }
      ],
      extensions: [
        { name: 'rules', listRule: 'true', viewRule: 'true', createRule: 'true', updateRule: null, deleteRule: null }
      ]
    }
  ]
})
