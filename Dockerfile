# ledgergate: the API, projections, webhook delivery, chain watchers and the withdrawal processor,
# in one process. The TypeScript sources are compiled to dist/ by scripts/build.mjs (esbuild).
FROM node:20-bookworm-slim

WORKDIR /app

# Dependencies first, so a source change reuses this layer. Only `dependencies` are needed at
# run time; dev tools (TypeScript, vitest, eslint, testcontainers) stay out of the image.
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY bin ./bin
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
RUN node scripts/build.mjs

# DATA_DIR holds generated dev secrets (and the embedded PostgreSQL when DATABASE_URL is unset);
# it must belong to the user the service runs as.
RUN mkdir -p /data && chown node:node /data

# MALLOC_ARENA_MAX: two malloc arenas, not one per thread (the service's resident memory, docs/operations.md)
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2

VOLUME ["/data"]
EXPOSE 8080

USER node

HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# node is PID 1 here: the service handles SIGTERM/SIGINT itself (stop, finish in-flight work, checkpoint, exit 0).
CMD ["node", "--max-old-space-size=256", "--max-semi-space-size=8", "bin/ledgergate.mjs", "serve"]
