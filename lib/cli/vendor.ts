// `fastbase vendor [dir]`: the project carries the fastbase it runs, as the tarball `npm pack` makes
// (vendor/fastbase-<version>.tgz), and its package.json depends on that file (decision D100). A
// container build or another machine then installs it with only what the project folder holds: a
// `file:` path to a checkout exists on one machine only, and a git URL needs git in the image.
// `fastbase init` from a checkout does the same; run this again after updating fastbase.
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { create as createTar, extract as extractTar } from 'tar'
import { packageRoot, packageVersion } from '../package.js'
import { errorMessage } from '../thrown.js'
import { isObject } from '../plain.js'
import { EXIT, atMost, err, out, parse, type Command } from './io.js'

/** The project folder that holds the tarball (the Dockerfile copies it before `npm ci`). */
export const VENDOR_DIR = 'vendor'

/** What package.json's dependency says for the tarball of this version. */
export function vendoredSpec (version = packageVersion): string {
  return `file:${VENDOR_DIR}/fastbase-${version}.tgz`
}

export const vendor: Command = {
  summary: 'put this fastbase into the project as a tarball its package.json depends on',
  help: `Usage: fastbase vendor [dir]

Packs this fastbase (npm pack) into dir/${VENDOR_DIR}/fastbase-<version>.tgz (dir: default the current
directory, the project's folder), removes older fastbase tarballs there, and points the dependency
in dir/package.json at it (${vendoredSpec()}). Then run npm install to
refresh package-lock.json, and commit both with the tarball: a container build (deploy/Dockerfile)
or another machine installs fastbase from the project folder alone, with no path to this checkout.
fastbase init from a checkout does this already; run it again after updating fastbase.

Exit codes: 0 done, 1 no package.json in dir or npm pack failed, 2 usage error.`,
  run: async (args) => {
    const { positionals } = parse(args, {})
    atMost(positionals, 1)
    const dir = resolve(positionals[0] ?? '.')
    let text: string
    try {
      text = await readFile(join(dir, 'package.json'), 'utf8')
    } catch (error) {
      err(`fastbase vendor: no package.json in ${dir} (${errorMessage(error)}): run it in the project's folder`)
      return EXIT.failed
    }
    const tarball = await packInto(dir)
    const pkg = JSON.parse(text) as { dependencies?: Record<string, string> }
    const before = pkg.dependencies?.fastbase
    pkg.dependencies = { ...pkg.dependencies, fastbase: vendoredSpec() }
    await writeFile(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
    out(`Packed ${tarball}`)
    out(before === vendoredSpec() ? 'package.json already depends on it.' : `package.json: fastbase ${before ?? '(none)'} -> ${vendoredSpec()}`)
    out('Next: npm install (refreshes package-lock.json), then commit package.json, package-lock.json and the tarball.')
    return EXIT.ok
  }
}

/** Packs this fastbase into `dir/vendor/` (older fastbase tarballs removed); the tarball's path. */
export async function packInto (dir: string): Promise<string> {
  const target = join(dir, VENDOR_DIR)
  await mkdir(target, { recursive: true })
  for (const name of await readdir(target)) {
    if (/^fastbase-.*\.tgz$/.test(name)) await rm(join(target, name))
  }
  const tarball = join(target, `fastbase-${packageVersion}.tgz`)
  const staging = await mkdtemp(join(tmpdir(), 'fastbase-pack-'))
  try {
    // dist/ is built already (this command runs from it): no prepare script, no devDependencies needed.
    await promisify(execFile)('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', staging], { cwd: packageRoot })
    await extractTar({ file: join(staging, `fastbase-${packageVersion}.tgz`), cwd: staging })
    await withoutPrepare(join(staging, 'package', 'package.json'))
    await createTar({ gzip: true, portable: true, cwd: staging, file: tarball }, ['package'])
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
  return tarball
}

/** The tarball installs built: npm 11 would list its `prepare` (a build needing devDependencies) among
 * the install scripts to approve, and approving it fails the install (decision D100). */
async function withoutPrepare (file: string): Promise<void> {
  const pkg: unknown = JSON.parse(await readFile(file, 'utf8'))
  if (!isObject(pkg) || !isObject(pkg.scripts) || pkg.scripts.prepare === undefined) return
  delete pkg.scripts.prepare
  await writeFile(file, `${JSON.stringify(pkg, null, 2)}\n`)
}
