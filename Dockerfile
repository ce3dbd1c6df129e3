# The Petstore server as a container image (docs/container.md):
#   docker build -t petstore-server .
#   docker run -p 8080:8080 -e PETSTORE_API_KEYS=my-key -v petstore:/data petstore-server
#
# Node 22.13 is the first Node 22 to load node:sqlite without a flag, so the SQLite store needs
# no native addon. 22.23, the newest, also reads its rows as arrays (setReturnArrays), which the
# store's hot path uses. The minor version is pinned; its patch releases come with a rebuild.

# Build: the whole lock file, then tsup writes dist/ (the binary is one bundle).
FROM node:22.23-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the build runs none (esbuild's binary is an optional package), and
# better-sqlite3, a devDependency for the tests, would compile an addon for nothing.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsup.config.ts ./
COPY src src
COPY adapters adapters
COPY bin bin
RUN npm run build

# Runtime dependencies: the package's own, and the pg and mysql2 drivers DATABASE_URL may ask for.
# Those are optional peers (and devDependencies, for the tests), which npm leaves out: here they
# become dependencies, and the lock file still decides every version. TypeScript, valibot's
# optional peer, is kept by npm (dev-or-optional) and removed: nothing loads it at run time.
FROM node:22.23-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN node -e "const fs = require('node:fs'), p = require('./package.json'); \
      for (const n of ['pg', 'mysql2']) { p.dependencies[n] = p.devDependencies[n]; delete p.devDependencies[n] } \
      fs.writeFileSync('package.json', JSON.stringify(p))" \
  && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/typescript

FROM node:22.23-bookworm-slim
# Configured by environment alone; every variable the binary reads is in `petstore-server --help`.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=sqlite:/data/petstore.db
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
# Owned by node, so that a new named volume on /data (which copies this directory) is writable.
RUN mkdir /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8080
# Slim images have no curl: Node's own fetch asks /healthz (200 while the store answers).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PETSTORE_PORT || process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself, finishes what is in flight and exits 0.
ENTRYPOINT ["node", "dist/bin/petstore-server.js"]
