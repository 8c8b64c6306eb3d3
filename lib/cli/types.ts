// `fastbase types [config] [--out <file>]`: writes the declaration file that types the in-process API
// (lib/cli/typegen.ts) from the config the server would load, checked as at start.
import { readFile, writeFile } from 'node:fs/promises'
import { relative, resolve } from 'node:path'
import { GENERATED_HEADER, declarationsFor } from './typegen.js'
import { LOCATION_HELP, loadCheckedConfig, reportProblems } from './check.js'
import { EXIT, atMost, err, out, parse, type Command } from './io.js'

const DEFAULT_OUT = 'fastbase-types.d.ts'

export const types: Command = {
  summary: 'write TypeScript types for the in-process API from a config',
  help: `Usage: fastbase types [config] [--out <file>] [--env-file <file>]

Writes a declaration file that types app.fastbase.tables (each table's row, insert and update
shapes), app.fastbase.hooks and runAction's params, by module augmentation of 'fastbase'. Include
it in your tsconfig (it is a .d.ts: anywhere tsc sees it), and run the command again when the
config changes. The config is checked as \`fastbase check\` does, except that its $NAME secrets
need not be set (types need none); a config with problems writes nothing. Code actions (the plugin's
\`actions\` option) are not in the config: type them with CodeActionTypes (see docs/extending.md).

${LOCATION_HELP}
  --out <file>        where to write. Default: ${DEFAULT_OUT} in the current folder. A file
                      there that this command did not write (such as the config) is never
                      overwritten

Exit codes: 0 written, 1 problems found, no config found, or --out names another file, 2 usage error.`,
  run: async (args) => {
    const { values, positionals } = parse(args, { out: { type: 'string' }, 'env-file': { type: 'string' } })
    atMost(positionals, 1)
    // Types are the config's shape: its secrets are never read, so CI may run this without them.
    const { file, result } = await loadCheckedConfig(positionals[0], values['env-file'], 'placeholder')
    if (!reportProblems(file, result) || result.config === undefined) return EXIT.failed
    const target = resolve(typeof values.out === 'string' ? values.out : DEFAULT_OUT)
    // `--out fastbase.config.ts` (a slip) would otherwise replace the config with its own types.
    const existing = await readFile(target, 'utf8').catch(() => undefined)
    if (existing !== undefined && !existing.startsWith(GENERATED_HEADER)) {
      err(`fastbase types: ${relative(process.cwd(), target) || target} exists and was not written by fastbase types: not overwritten (remove it, or name another --out)`)
      return EXIT.failed
    }
    await writeFile(target, declarationsFor(result.config, relative(process.cwd(), file) || file))
    out(`wrote ${relative(process.cwd(), target) || target}: ${result.tables} table${result.tables === 1 ? '' : 's'}, ${result.actions} action${result.actions === 1 ? '' : 's'}`)
    return EXIT.ok
  }
}
