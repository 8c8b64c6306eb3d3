// `npm run build`, after tsc: the package's declarations become one self-contained file per public
// entry point (package.json's `types` and `exports`), and every other .d.ts under dist/ is removed, so
// users cannot type-import internal modules we must stay free to change (decision D220). tsc's .d.ts
// files are rollup-plugin-dts's input; imports of other packages stay imports. The .js files are untouched.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rollup } from 'rollup'
import { dts } from 'rollup-plugin-dts'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The declaration file of each public entry point: an export's `types` condition, else the .d.ts beside its .js. */
function entryDeclarations () {
  const exported = Object.values(pkg.exports).map((e) => typeof e === 'string' ? e.replace(/\.js$/, '.d.ts') : e.types)
  return [...new Set([pkg.types, ...exported].map((p) => join(root, p)))]
}

// tsc's declarations as one program: which declaration an import or an export names, through re-exports.
const [main, ...others] = entryDeclarations()
const program = ts.createProgram([main, ...others], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true })
const checker = program.getTypeChecker()
const declared = (symbol) => symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol

/** What the main entry exports, by the symbol it names: the name it has there. */
function mainExports () {
  const module = checker.getSymbolAtLocation(program.getSourceFile(main))
  return new Map(checker.getExportsOfModule(module).map((s) => [declared(s), s.name]))
}

/**
 * Another entry's declarations with its imports of what the main entry exports taken from the package
 * itself (`from 'fastbase'`): one declaration of `Fastbase` and of the `declare module 'fastify'`
 * augmentation, which two copies would contradict in a program that imports both entries.
 */
function importingMain (file, exported) {
  const source = program.getSourceFile(file)
  let text = source.text
  const imports = source.statements.filter((n) => ts.isImportDeclaration(n) && n.moduleSpecifier.text.startsWith('.') && n.importClause?.namedBindings && ts.isNamedImports(n.importClause.namedBindings) && !n.importClause.name)
  for (const node of imports.reverse()) {
    const elements = node.importClause.namedBindings.elements.map((el) => ({ local: el.name.text, public: exported.get(declared(checker.getSymbolAtLocation(el.name))) }))
    if (elements.some((el) => el.public === undefined)) continue
    const named = elements.map((el) => el.public === el.local ? el.local : `${el.public} as ${el.local}`).join(', ')
    text = `${text.slice(0, node.getStart(source))}import type { ${named} } from '${pkg.name}';${text.slice(node.end)}`
  }
  return text
}

async function bundle (entry, load) {
  const build = await rollup({
    input: entry,
    // Bare ids stay imports; the package's own name too (tsc would resolve it to these sources).
    external: [pkg.name],
    plugins: [{ name: 'entry-source', load: (id) => id === entry ? load?.(entry) : null }, dts({ tsconfig: join(root, 'tsconfig.build.json') })],
    onwarn: (w) => { throw new Error(`${relative(root, entry)}: ${w.message}`) }
  })
  const { output } = await build.generate({ format: 'es' })
  await build.close()
  return output[0].code
}

const exported = mainExports()
const bundles = new Map([[main, await bundle(main)]])
for (const entry of others) bundles.set(entry, await bundle(entry, (file) => importingMain(file, exported)))
for (const file of readdirSync(dist, { recursive: true }).filter((f) => f.endsWith('.d.ts'))) rmSync(join(dist, file))
for (const [entry, code] of bundles) writeFileSync(entry, code)
console.log(`bundled types: ${[...bundles.keys()].map((e) => relative(root, e)).join(', ')}`)
