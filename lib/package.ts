// fastbase's own package: its root directory and version. The code runs both from source (tests,
// via ts-node) and from dist/ after tsc, so the root is found by walking up, once.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`fastbase: no package.json above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
  return dir
}

export const packageRoot = findRoot()
export const packageVersion: string = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0'
