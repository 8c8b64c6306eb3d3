// What every command shares: exit codes, usage errors, and output.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { errorMessage } from '../thrown.js'

/** 0 ok, 1 problems found or the command failed, 2 the command line is wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** A wrong command line: the message goes to stderr with a pointer to `--help`, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

export interface Command {
  /** One line for `fastbase --help`. */
  summary: string
  /** The full text of `fastbase <command> --help`. */
  help: string
  run: (args: string[]) => Promise<number>
}

export const out = (line: string): void => { process.stdout.write(`${line}\n`) }
export const err = (line: string): void => { process.stderr.write(`${line}\n`) }

/** `1 file`, `2 files`: a count with its noun, for what the commands print. */
export const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`

type Options = NonNullable<ParseArgsConfig['options']>

/** `parseArgs` with `--help`, turning its errors (unknown option, missing value) into usage errors. */
export function parse<O extends Options> (args: string[], options: O): { values: Record<string, string | boolean | undefined>, positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
    return { values, positionals }
  } catch (error) {
    throw new UsageError(errorMessage(error))
  }
}

/** At most `max` positionals, else a usage error naming the extra ones. */
export function atMost (positionals: string[], max: number): void {
  if (positionals.length > max) throw new UsageError(`unexpected argument${positionals.length - max > 1 ? 's' : ''}: ${positionals.slice(max).join(' ')}`)
}
