// `fastbase <command>`: dispatch, `--help`, and the exit codes of every command (lib/cli/io.ts).
import { packageVersion } from '../package.js'
import { check } from './check.js'
import { exec } from './exec.js'
import { init } from './init.js'
import { migrate } from './migrate.js'
import { backup } from './backup.js'
import { restore } from './restore.js'
import { copy } from './copy.js'
import { types } from './types.js'
import { vendor } from './vendor.js'
import { EXIT, UsageError, err, out, type Command } from './io.js'
import { errorMessage } from '../thrown.js'

const COMMANDS: Record<string, Command> = { check, init, exec, migrate, types, backup, restore, copy, vendor }

const HELP = `Usage: fastbase <command> [options]

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(9)}${c.summary}`).join('\n')}

Options:
  -h, --help     show help (also after a command: fastbase check --help)
  -v, --version  print the version

Exit codes: 0 ok, 1 problems found or the command failed, 2 usage error.`

export async function main (argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name === 'help' && rest[0] !== undefined && COMMANDS[rest[0]] !== undefined) out(COMMANDS[rest[0]].help)
    else out(HELP)
    return EXIT.ok
  }
  if (name === '--version' || name === '-v') {
    out(packageVersion)
    return EXIT.ok
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    err(`fastbase: unknown command "${name}"\n\n${HELP}`)
    return EXIT.usage
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    out(command.help)
    return EXIT.ok
  }
  try {
    return await command.run(rest)
  } catch (error) {
    if (error instanceof UsageError) {
      err(`fastbase ${name}: ${error.message}\nRun "fastbase ${name} --help" for usage.`)
      return EXIT.usage
    }
    err(`fastbase ${name}: ${errorMessage(error)}`)
    return EXIT.failed
  }
}
