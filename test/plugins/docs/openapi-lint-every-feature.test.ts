// The every-feature project's API document lints clean: Redocly CLI `recommended` and Spectral
// `spectral:oas` report no error and no warning (test/fixtures/openapi/lint.ts). One project per file,
// so each file stays well inside tap's per-file timeout.
import t from 'tap'
import { projects } from '../../fixtures/openapi/documents.js'
import { lintProject } from '../../fixtures/openapi/lint.js'

const project = projects.find((p) => p.name === 'every-feature')!
t.test(`${project.name}: Redocly recommended and Spectral spectral:oas report nothing`, async (t) => await lintProject(t, project))
