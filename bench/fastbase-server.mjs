// fastbase under test: the bench project (or the 100-table start-up project) registered on a plain
// Fastify instance, as an application embedding it would. Reports the time register + ready took.
import { benchConfig, manyTablesConfig, openFastbase } from './project.mjs'
import { serveOverIpc, serverOptions } from './child.mjs'
import { searchConfig } from './search.mjs'

const { project, databaseUrl, dataDir } = serverOptions()
const config = project === 'many-tables' ? manyTablesConfig() : project === 'search' ? searchConfig() : benchConfig()

const started = performance.now()
const app = await openFastbase(config, databaseUrl, dataDir)
await serveOverIpc(app, performance.now() - started)
