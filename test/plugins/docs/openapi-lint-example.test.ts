// The bundled example project's API document lints clean: Redocly CLI `recommended` and Spectral
// `spectral:oas` report no error and no warning (test/fixtures/openapi/lint.ts). One project per file,
// so each file stays well inside tap's per-file timeout.
import t from 'tap'
import { projects } from '../../fixtures/openapi/documents.js'
import { lintDocument, lintProject } from '../../fixtures/openapi/lint.js'
import { freshDir } from '../../helper.js'

const project = projects.find((p) => p.name === 'example')!

// The linters are not vacuous: the flaws the first document had (no operationId, an unnamed `{*}` path
// parameter, no servers) are reported on a copy of the same document.
t.test(`${project.name}: Redocly recommended and Spectral spectral:oas report nothing; a damaged copy is reported`, async (t) => {
  const doc = await lintProject(t, project) as any
  const damaged = structuredClone(doc)
  for (const item of Object.values(damaged.paths) as any[]) for (const op of Object.values(item) as any[]) delete op.operationId
  const files = Object.keys(damaged.paths).find((p) => p.includes('/files/') && p.includes('{path}'))!
  damaged.paths[files.replace('{path}', '{*}')] = damaged.paths[files]
  delete damaged.paths[files]
  delete damaged.servers
  const { redocly, spectral } = lintDocument(damaged, freshDir(t, 'damaged-'))
  t.ok(redocly.totals.errors > 0, `Redocly finds errors (${redocly.totals.errors})`)
  t.ok(redocly.problems.some((p) => p.startsWith('operation-operationId')), 'Redocly: operation-operationId')
  t.ok(spectral.results.some((r) => r.startsWith('operation-operationId')), 'Spectral: operation-operationId')
  t.ok(spectral.results.some((r) => r.startsWith('path-params')), 'Spectral: path-params')
})
