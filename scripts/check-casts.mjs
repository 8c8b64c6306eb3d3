// `npm run check:casts` (and .ci/run, before the tests): counts type assertions in the production
// sources (`x as T` other than `as const`, `<T>x`, and non-null assertions `x!`) with TypeScript's own
// parser, and fails when the count is above the ceiling below. Every cast is a place where the types
// stopped describing the code; the ceiling only ever comes down. `--list` prints the count per file.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** The most assertions the production sources may hold. Lower it when you remove some. */
const CEILING = 111

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SOURCES = ['app.ts', 'index.ts', 'plugins', 'routes', 'schemas', 'lib']

function * tsFiles (path) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path)) yield * tsFiles(join(path, entry))
  } else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) yield path
}

/** `{ as, nonNull }` assertions in one file's syntax tree. */
function countIn (file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const counts = { as: 0, nonNull: 0 }
  const visit = (node) => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const'
      if (!isConst) counts.as++
    } else if (ts.isNonNullExpression(node)) counts.nonNull++
    ts.forEachChild(node, visit)
  }
  visit(source)
  return counts
}

const perFile = []
for (const top of SOURCES) {
  for (const file of tsFiles(join(root, top))) perFile.push({ file: relative(root, file), ...countIn(file) })
}
const total = perFile.reduce((sum, f) => sum + f.as + f.nonNull, 0)
const asTotal = perFile.reduce((sum, f) => sum + f.as, 0)

if (process.argv.includes('--list')) {
  for (const f of perFile.filter((f) => f.as + f.nonNull > 0).sort((a, b) => (b.as + b.nonNull) - (a.as + a.nonNull))) {
    console.log(`${String(f.as + f.nonNull).padStart(4)}  ${f.file} (${f.as} as, ${f.nonNull} !)`)
  }
}
console.log(`${total} type assertions in ${perFile.length} files (${asTotal} \`as\`, ${total - asTotal} non-null); ceiling ${CEILING}`)
if (total > CEILING) {
  console.error(`Over the ceiling by ${total - CEILING}: type what is cast instead of asserting it.`)
  process.exit(1)
}
