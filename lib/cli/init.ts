// `fastbase init [dir]`: a new project that `npm install && npm start` serves at once. Never
// overwrites: when any file it would write exists, it writes nothing and names them.
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { packageRoot, packageVersion } from '../package.js'
import { EXIT, atMost, err, out, parse, type Command } from './io.js'
import { VENDOR_DIR, packInto, vendoredSpec } from './vendor.js'

export const init: Command = {
  summary: 'scaffold a new project (config, .env, package.json, README)',
  help: `Usage: fastbase init [dir] [--fastbase <npm spec>]

Writes a new project into dir (default: the current directory; created if missing):
  fastbase.config.ts   a users table with sign-up and login, and a notes table with rules
  .env                 generated secrets (JWT_SECRET, JWT_SECRET_USERS, ADMIN_SERVICE_TOKEN)
  .env.example         the variables the project reads, without values
  .gitignore, README.md
  package.json         npm start serves the project at http://localhost:3000
  ${VENDOR_DIR}/              fastbase-<version>.tgz when fastbase is not from a registry (see below)
Refuses to overwrite: if any of these files exists, nothing is written (exit 1).

  --fastbase <spec>    how package.json depends on fastbase: a version range, a git URL, a
                       tarball, or file:<path>. Default: this fastbase's version when it was
                       installed from a registry, else this fastbase packed into
                       ${VENDOR_DIR}/fastbase-<version>.tgz (${vendoredSpec()}), so that
                       the folder alone installs and deploys (fastbase vendor refreshes it)

Then: cd dir && npm install && npm start
Exit codes: 0 written, 1 a file exists or writing failed, 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { fastbase: { type: 'string' } })
    atMost(positionals, 1)
    const dir = resolve(positionals[0] ?? '.')
    const spec = typeof values.fastbase === 'string' && values.fastbase !== '' ? values.fastbase : defaultSpec()
    const files = scaffold(basename(dir), spec)
    const tarball = join(VENDOR_DIR, `fastbase-${packageVersion}.tgz`)
    const existing = [...Object.keys(files), ...(spec === vendoredSpec() ? [tarball] : [])].filter((name) => existsSync(join(dir, name)))
    if (existing.length > 0) {
      err(`fastbase init: not overwriting existing file${existing.length === 1 ? '' : 's'} in ${dir}: ${existing.join(', ')}`)
      err('Nothing was written. Choose an empty directory or move these files away.')
      return EXIT.failed
    }
    // `wx`: fails instead of overwriting a file that appeared since the check.
    for (const [name, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true })
      await writeFile(join(dir, name), text, { flag: 'wx', mode: name === '.env' ? 0o600 : 0o644 })
    }
    if (spec === vendoredSpec()) out(`Packed ${await packInto(dir)}`)
    const where = relative(process.cwd(), dir) || '.'
    out(`Created ${Object.keys(files).join(', ')} in ${dir}`)
    out('')
    out('Next:')
    if (where !== '.') out(`  cd ${where}`)
    out('  npm install')
    out('  npm start          # http://localhost:3000/api/v1/doc/ui')
    return EXIT.ok
  }
}

/**
 * A registry range when this fastbase came from a registry (it sits in a node_modules folder), else
 * this checkout packed into the project (decision D100): a path to the checkout exists on this machine only.
 */
function defaultSpec (): string {
  return packageRoot.split(/[\\/]/).includes('node_modules') ? `^${packageVersion}` : vendoredSpec()
}

/** fastify-cli at the range fastbase itself uses, so `npm start` runs the same server. */
function ownPackage (): { dependencies?: Record<string, string>, engines?: { node?: string }, overrides?: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'))
}

function fastifyCliRange (): string {
  return ownPackage().dependencies?.['fastify-cli'] ?? '^7.4.1'
}

const secret = (): string => randomBytes(32).toString('base64url')

function scaffold (dirName: string, fastbaseSpec: string): Record<string, string> {
  const name = dirName.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+|[-]+$/g, '') || 'fastbase-app'
  const packageJson = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    // The Node versions fastbase itself runs on (its dependencies' engines decide them).
    engines: { node: ownPackage().engines?.node ?? '>=20.19' },
    scripts: {
      // start.mjs and the CLI read .env and find fastbase.config.ts by the same rule (lib/config/locations.ts);
      // V8's old generation grown by half at a time, its optimizer off until the server listens and its
      // young generation given back when the server is quiet, as by fastbase's own `npm start`
      // (decisions D80, D137, D144).
      start: 'node --heap-growing-percent=50 --no-opt node_modules/fastbase/scripts/start.mjs --options --log-level info node_modules/fastbase/dist/app.js',
      check: 'fastbase check',
      migrate: 'fastbase migrate'
    },
    dependencies: {
      fastbase: fastbaseSpec,
      'fastify-cli': fastifyCliRange()
    },
    // npm 11 runs no install script it was not told to: without this, a fastbase installed from the
    // registry or a tarball gets better-sqlite3 without its native binding, and nothing starts.
    // sharp (thumbnails, decision D122) takes its binary from an @img/sharp-* package; 0.35 has no
    // install script, earlier versions check or build the binary in one, so it is allowed too.
    allowScripts: { 'better-sqlite3': true, sharp: true },
    // fastbase's own: a dependency's `overrides` do not reach the project that installs it, and
    // without them `npm install` warns EBADENGINE on Node 20 (decision D100).
    ...(ownPackage().overrides !== undefined ? { overrides: ownPackage().overrides } : {})
  }
  return {
    'fastbase.config.ts': CONFIG,
    '.env': `# Generated by fastbase init. Keep this file out of version control.
FASTBASE_CONFIG=fastbase.config.ts
JWT_SECRET=${secret()}
JWT_SECRET_USERS=${secret()}
ADMIN_SERVICE_TOKEN=${secret()}
# DATABASE_URL=postgres://user:password@localhost:5432/${name.replace(/[^a-z0-9_]/g, '_')}
`,
    '.env.example': ENV_EXAMPLE,
    '.gitignore': 'node_modules/\ndata/\n.env\n',
    'README.md': readme(name),
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    [`${VENDOR_DIR}/README.md`]: VENDOR_README
  }
}

const CONFIG = `// The project config: tables, rules and auth. fastbase serves a REST API from it
// (http://localhost:3000/api/v1/doc/ui lists every endpoint). \`$NAME\` values are read from the
// environment (.env with npm start), so this file holds no secret.
import { authFields, baseFields, defineConfig, sql, sqlValue } from 'fastbase'

export default defineConfig({
  appName: 'My fastbase app',
  appUrl: 'http://localhost:3000',
  jwtSecret: '$JWT_SECRET',
  tables: [
    {
      // Accounts: POST /api/v1/table/users/auth/sign-up, .../login-password, .../refresh-token
      name: 'users',
      autoSetUid: true,
      fields: [...baseFields, ...authFields],
      extensions: [
        { name: 'auth', jwtSecret: '$JWT_SECRET_USERS', jwtTokenDuration: 3600, maxTokenRefresh: 0 },
        {
          name: 'rules',
          // A user sees and edits only their own record and cannot pick or change their role.
          listRule: 'auth.uid == id',
          viewRule: 'auth.uid == id',
          createRule: "role == null | role == 'user'",
          updateRule: 'auth.uid == id & new.role == role',
          deleteRule: null, // admins only
          // Only its owner reads an account's email, also once listRule opens (to show authors' names).
          fieldRules: { email: 'id == auth.uid' }
        }
      ]
    },
    {
      // Each user's own notes: GET /api/v1/table/notes/list, POST /api/v1/table/notes/insert
      name: 'notes',
      autoSetUid: true,
      fields: [
        ...baseFields,
        { name: 'owner_id', type: 'relation', sqlType: 'text', notNull: true, foreignKey: { table: 'users', column: 'id', onDelete: 'CASCADE' } },
        { name: 'title', type: 'text', sqlType: 'text', notNull: true, check: sql\`length(title) <= 200\` },
        { name: 'body', type: 'text', sqlType: 'text' },
        { name: 'done', type: 'bool', sqlType: 'boolean', notNull: true, default: sqlValue(false) }
      ],
      indexes: [{ fields: ['owner_id'] }],
      extensions: [
        {
          name: 'rules',
          listRule: 'owner_id == auth.uid',
          viewRule: 'owner_id == auth.uid',
          createRule: 'auth.uid != null & owner_id == auth.uid',
          updateRule: 'owner_id == auth.uid & new.owner_id == owner_id',
          deleteRule: 'owner_id == auth.uid'
        }
      ]
    }
  ]
})
`

const VENDOR_README = `# vendor/

When package.json depends on \`${vendoredSpec('<version>')}\`, the tarball is here: this fastbase as
\`npm pack\` made it, so that \`npm ci\` installs it from this folder alone (a container build copies
this folder before \`npm ci\`). Refresh it after updating fastbase with \`npx fastbase vendor\`, then
\`npm install\`, and commit the tarball with package.json and package-lock.json. When fastbase
comes from a registry, this folder holds only this file.
`

const ENV_EXAMPLE = `# The variables this project reads. npm start loads them from .env (fastbase init generated one).
# Config file (relative to this folder)
FASTBASE_CONFIG=fastbase.config.ts
# Signing key for user tokens when a table sets none, and for the users table (long random strings)
JWT_SECRET=
JWT_SECRET_USERS=
# Superadmin token: Authorization: Bearer <token> (also what fastbase exec sends)
ADMIN_SERVICE_TOKEN=
# Empty: SQLite in ./data/fastbase.sqlite. Or postgres://user:password@host:5432/db
DATABASE_URL=
`

function readme (name: string): string {
  return `# ${name}

A backend served by fastbase from one config file, \`fastbase.config.ts\`.

## Run

\`\`\`sh
npm install
npm start            # http://localhost:3000
\`\`\`

- API explorer: http://localhost:3000/api/v1/doc/ui
- Health: http://localhost:3000/api/v1/health

\`npm start\` and every \`npx fastbase\` command run in this folder find the same things, and say so
(a log line on start, a line from each command):

- \`.env\` here: the secrets \`fastbase init\` generated, \`DATABASE_URL\` and anything else;
  variables already set in the environment win. \`.env.example\` lists every variable; keep \`.env\`
  out of version control. Set \`PORT\` or \`FASTIFY_ADDRESS\` to change where it listens.
- the config: \`FASTBASE_CONFIG\` (set in \`.env\`), else \`fastbase.config.ts\` here.
- the database: \`DATABASE_URL\`, else SQLite in \`./data/fastbase.sqlite\`.

## Change the config

\`\`\`sh
npm run check        # every problem in the config, one per line (fastbase check)
\`\`\`

Restart \`npm start\` after a change: new tables and columns, indexes and renames (\`lastName\`)
are applied on start. Changes that drop or change data (a dropped column or table, a type change,
a new constraint) never run on start; they wait until you name them:

\`\`\`sh
npx fastbase migrate                           # what is pending, with its SQL
npx fastbase migrate --apply                   # applies the safe ones; lists the destructive ones
npx fastbase migrate --apply --allow-destructive   # after a backup: applies those too
\`\`\`

On a terminal, \`--apply\` asks and applies the destructive ones only when you type \`yes\`. A plan
that would drop every table of the database is refused: it means the config is not the one that
made this database. A table another project (another \`appName\`) made in the same database is
never dropped.

## Deploy

fastbase's \`deploy/Dockerfile\` builds this folder as it is: it copies \`package.json\`,
\`package-lock.json\` and \`vendor/\` and runs \`npm ci\`. When \`package.json\` depends on a
tarball in \`vendor/\` (a project made from a fastbase checkout), commit it; after updating fastbase,
\`npx fastbase vendor\` packs it again (then \`npm install\`).

## Call the API as admin

\`\`\`sh
npx fastbase exec GET table/notes/list        # uses ADMIN_SERVICE_TOKEN from the environment
\`\`\`
`
}
