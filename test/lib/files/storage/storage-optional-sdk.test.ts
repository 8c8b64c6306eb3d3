// The AWS SDK is an optional dependency: only the S3 driver imports it, and only when the config
// asks for S3. Without it installed (simulated by module hooks that refuse to resolve `@aws-sdk/*`,
// in a child process running the build), local storage works as ever and an S3 config is refused
// with one line naming the packages to install; with it, the S3 driver loads.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = join(import.meta.dirname, '..', '..', '..', '..')
const withoutSdk = join(root, 'test', 'fixtures', 'storage', 'without-aws-sdk.mjs')
const storageModule = pathToFileURL(join(root, 'dist', 'lib', 'files', 'storage', 'index.js')).href

/** Runs `createStorage(config)` of the build in a child process; answers what it printed. */
function createStorageIn (dir: string, config: unknown, hooks: string[]): { status: number | null, stdout: string, stderr: string } {
  const script = `
    const { createStorage } = await import(${JSON.stringify(storageModule)})
    try {
      const storage = await createStorage(${JSON.stringify(config)}, ${JSON.stringify(dir)})
      console.log(JSON.stringify({ ok: typeof storage.put === 'function' }))
      await storage.close()
    } catch (err) {
      console.log(JSON.stringify({ name: err.name, code: err.code, problems: err.problems, message: err.message }))
    }`
  const run = spawnSync(process.execPath, [...hooks, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }
}

const s3 = { driver: 's3', bucket: 'b', region: 'eu-west-1', endpoint: 'http://127.0.0.1:9', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true }

t.test('without the AWS SDK', async (t) => {
  const hooks = ['--import', pathToFileURL(withoutSdk).href]
  const local = createStorageIn(t.testdir(), undefined, hooks)
  t.equal(local.status, 0, local.stderr)
  t.same(JSON.parse(local.stdout), { ok: true }, 'local storage needs no SDK')

  const refused = createStorageIn(t.testdir(), s3, hooks)
  t.equal(refused.status, 0, refused.stderr)
  t.same(JSON.parse(refused.stdout), {
    name: 'ConfigError',
    code: 'FB_ERR_CONFIG',
    problems: ["storage.driver: 's3' needs the AWS SDK, which is not installed; run: npm install @aws-sdk/client-s3 @aws-sdk/lib-storage"],
    message: "Invalid fastbase config:\n  - storage.driver: 's3' needs the AWS SDK, which is not installed; run: npm install @aws-sdk/client-s3 @aws-sdk/lib-storage"
  }, 'an S3 config names the packages to install')
})

t.test('with the AWS SDK installed, the S3 driver loads', async (t) => {
  const loaded = createStorageIn(t.testdir(), s3, [])
  t.equal(loaded.status, 0, loaded.stderr)
  t.same(JSON.parse(loaded.stdout), { ok: true })
})
