import { defineConfig } from 'tsup'

// One entry per subpath export of package.json, plus the binary.
export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      sqlite: 'src/store/sql/sqlite.ts',
      postgres: 'src/store/sql/postgres.ts',
      mysql: 'src/store/sql/mysql.ts',
      kysely: 'src/store/sql/kysely.ts',
      d1: 'src/store/sql/d1.ts',
      testing: 'src/testing.ts',
      node: 'adapters/node/index.ts',
      bun: 'adapters/bun.ts',
      deno: 'adapters/deno.ts',
      docs: 'adapters/docs.ts',
      msw: 'adapters/msw.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    // Shared modules go to shared chunks in both formats, so each class exists once per format.
    splitting: true,
    clean: true,
    target: 'node20',
    outDir: 'dist',
    // tsup strips `node:` by default, which would turn import('node:sqlite') into the npm package `sqlite`.
    removeNodeProtocol: false,
    // An optional dependency, which tsup would bundle: its files are found from where it is installed.
    external: ['swagger-ui-dist'],
  },
  {
    entry: { 'bin/petstore-server': 'bin/petstore-server.ts' },
    format: ['esm'],
    target: 'node20',
    outDir: 'dist',
    removeNodeProtocol: false,
    // Drivers stay outside the bundle: they are optional peers, loaded on demand. So do prom-client
    // (an optional dependency, loaded with --metrics-port), @opentelemetry/api (an optional peer:
    // bundled, it would always be there, and apart from the SDK an application registers) and
    // swagger-ui-dist (it finds its files from where it is installed; loaded on the first /docs request).
    external: ['better-sqlite3', 'pg', 'mysql2', 'prom-client', '@opentelemetry/api', 'swagger-ui-dist'],
    // Everything else goes in it: loading kysely as ~280 ESM files took ~170 ms of the binary's
    // start, bundled ~20 ms (the library entries keep their dependencies external, as they must).
    noExternal: [/^(?!better-sqlite3$|pg$|mysql2$|prom-client$|@opentelemetry\/api$|swagger-ui-dist(\/|$))/],
    // Bundled CommonJS dependencies (of @whatwg-node/server) call require(), which ESM lacks.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  },
])
