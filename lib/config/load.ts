// Reads a config file: JSON, a JS module or a TypeScript module (through jiti, so a `.ts` config
// works from the compiled `dist/` build without a TypeScript loader).
import { readFile, stat } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError } from '../errors.js'
import { errorMessage } from '../thrown.js'

const LOADERS: Record<string, (file: string) => Promise<unknown>> = {
  '.json': loadJson,
  '.js': loadModule,
  '.mjs': loadModule,
  '.cjs': loadModule,
  '.ts': loadTypeScript,
  '.mts': loadTypeScript,
  '.cts': loadTypeScript
}

/**
 * The config exported by `path` (relative paths are taken from the working directory): a JSON
 * document, or a module's default export (the module itself when it has none). An exported
 * function is called and its (awaited) result is the config. Throws `ConfigError`.
 */
export async function loadConfigFile (path: string): Promise<unknown> {
  const file = resolve(path)
  const loader = LOADERS[extname(file).toLowerCase()]
  if (loader === undefined) {
    throw new ConfigError([`${file}: unsupported config file type (use .json, .js, .mjs, .cjs, .ts or .mts)`])
  }
  const info = await stat(file).catch(() => undefined)
  if (info === undefined || !info.isFile()) throw new ConfigError([`${file}: config file not found`])
  const exported = await loader(file)
  return typeof exported === 'function' ? await exported() : exported
}

async function loadJson (file: string): Promise<unknown> {
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '')
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new ConfigError([`${file}: invalid JSON${describeJsonError(text) ?? `: ${errorMessage(err)}`}`])
  }
}

/**
 * ` at line L, column C: unexpected "x"` for text that JSON.parse rejected. Node 20's messages
 * do not always carry a position, so a small scanner of the JSON grammar finds it.
 */
function describeJsonError (text: string): string | undefined {
  const offset = jsonErrorOffset(text)
  if (offset === undefined) return undefined
  const lines = text.slice(0, offset).split('\n')
  const found = offset < text.length ? JSON.stringify(text[offset]) : 'end of file'
  return ` at line ${lines.length}, column ${lines[lines.length - 1].length + 1}: unexpected ${found}`
}

class JsonStop { constructor (readonly offset: number) {} }

const JSON_ATOM = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y
const JSON_ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y

/** Offset of the first character that is not valid JSON, or undefined when the text is valid. */
function jsonErrorOffset (text: string): number | undefined {
  let i = 0
  const stop = (): never => { throw new JsonStop(i) }
  const space = (): void => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++ }
  const take = (char: string): void => { if (text[i] !== char) stop(); i++ }
  const string = (): void => {
    take('"')
    while (text[i] !== '"') {
      if (i >= text.length || text[i] < ' ') stop()
      if (text[i] !== '\\') { i++; continue }
      JSON_ESCAPE.lastIndex = i
      if (!JSON_ESCAPE.test(text)) stop()
      i = JSON_ESCAPE.lastIndex
    }
    i++
  }
  const list = (close: string, item: () => void): void => {
    i++
    space()
    if (text[i] === close) { i++; return }
    for (;;) {
      item()
      space()
      if (text[i] !== ',') break
      i++
    }
    take(close)
  }
  const value = (): void => {
    space()
    if (text[i] === '{') list('}', () => { space(); string(); space(); take(':'); value() })
    else if (text[i] === '[') list(']', value)
    else if (text[i] === '"') string()
    else {
      JSON_ATOM.lastIndex = i
      if (!JSON_ATOM.test(text)) stop()
      i = JSON_ATOM.lastIndex
    }
  }
  try {
    value()
    space()
    if (i < text.length) stop()
    return undefined
  } catch (err) {
    if (err instanceof JsonStop) return err.offset
    throw err
  }
}

async function loadModule (file: string): Promise<unknown> {
  // A module namespace: its exports by name (import() of a computed path is typed `any`).
  const module: Record<string, unknown> = await importOrExplain(file, async () => await import(pathToFileURL(file).href))
  // A namespace object is exotic (null prototype, read-only); the config is plain data.
  return module.default ?? { ...module }
}

async function loadTypeScript (file: string): Promise<unknown> {
  // No module cache: a config edited while the process runs (tests, dev restarts) is read afresh.
  // Loaded only for TypeScript configs: JSON and JS configs never pay for the transpiler.
  const { createJiti } = await import('jiti')
  const jiti = createJiti(import.meta.url, { moduleCache: false })
  const module = await importOrExplain(file, async () => await jiti.import<Record<string, unknown>>(file))
  return module.default ?? { ...module }
}

async function importOrExplain<T> (file: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    throw new ConfigError([`${file}: could not be loaded: ${errorMessage(err)}`])
  }
}
