// `npm run check:cycles` (and .ci/run, before the tests): the module graph of the sources, type-only
// imports included, must have no cycle between files, and lib/ must not depend on Fastify (it is the
// plain library the plugins and routes wrap). Cycles between folders are found by
// scripts/check-cycles.mjs from this graph.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file that reaches itself through its imports: split out what both sides need.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'lib-without-fastify',
      severity: 'error',
      comment: 'lib/ is the framework-free core; Fastify belongs to plugins/ and routes/.',
      from: { path: '^lib/' },
      to: { path: '(^|/)node_modules/(fastify|@fastify/|fastify-plugin|fastify-cli)' }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] }
  }
}
