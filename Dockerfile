# svc as a container: compiled in one stage, run as a non-root user from the next.
# The build steps are the ones .ci/run runs (npm ci, npm run build), so CI checks them, on the same
# Node.js: 24.21.0, node:24-bookworm-slim as published for that release, pinned by its digest (the
# multi-platform index) so that a rebuild gets the same base. Both stages use the same image: Node
# refuses a compile cache written by another Node version.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553

FROM ${NODE_IMAGE} AS build
# Nothing is compiled on install (SQLite is Node's own), so the stage needs no compiler. It runs as
# `node`, the user the image runs the service as: Node keeps a compile cache per user id, and the
# build's warm-up start writes the one the service reads.
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY --chown=node:node tsconfig.json ./
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node src ./src
COPY --chown=node:node console ./console
COPY --chown=node:node clients ./clients
COPY --chown=node:node README.md ./
COPY --chown=node:node docs ./docs
# Node writes its cache files readable by their owner only; in the image they are root's. The build
# makes the documentation site too (dist/docs, served at /docs). The bundle holds the packages' code; of
# node_modules the image keeps only the packages the service loads from it at run time (and theirs),
# copied into runtime/node_modules (scripts/image-modules.mjs).
RUN npm run build && chmod -R a+rX dist/compile-cache && node scripts/image-modules.mjs runtime

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
# package.json says dist/ is ES modules; node_modules holds what the service loads from it at run time,
# dist/sbom.cdx.json lists every package that ships (CycloneDX).
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/runtime/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# The code stays owned by root and read-only to the service; only the data directory is its own.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# dist/main.js runs itself: its first line carries the runtime settings of `npm start` (package.json's
# start script, the one place they are written: environment and node flags), put there by the build.
CMD ["/app/dist/main.js"]
