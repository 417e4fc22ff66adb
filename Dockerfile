# syntax=docker/dockerfile:1
# One image for every Swarm function (env FUNCTION=assign|restart picks which),
# plus the reference worker as a second target:
#   docker build --target functions -t swarm .
#   docker build --target worker    -t swarm-worker .
# `npm run test:image` builds both targets from this file with buildah (no
# Docker engine) and runs them; see test/image/README.md.

# Node 26 is the Active LTS line (since October 2026).
ARG NODE_VERSION=26.10.0

# --- build: full dependency tree, TypeScript compiled to dist/, the functions bundled
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY functions functions
COPY bin bin
COPY examples examples
RUN npm run build && npm run bundle

# --- production dependencies only (the worker's) -------------------------------
FROM node:${NODE_VERSION}-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- shared runtime: no compiler, no dev tools, not root -----------------------
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
# uid 1000 is the image's `node` user; numeric so the kubelet can verify
# runAsNonRoot. The files stay root-owned: the process cannot modify its code.
USER 1000:1000
EXPOSE 8080

# --- the reference worker (examples/worker) -------------------------------------
FROM runtime AS worker
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /src/dist ./dist
COPY --chown=root:root package.json ./
ENV CONFIG_PATH=/etc/swarm/config.yml
CMD ["node", "dist/examples/worker/main.js"]

# The last stage is the default target.
# --- the functions (Knative Services swarm-assign, swarm-restart) -------------
# One file (esbuild, `npm run bundle`), no node_modules: a cold start loads it
# in about 0.3 s of CPU against 0.75 s for the same code as hundreds of
# modules, and on the function's 500m CPU limit that is most of the wait.
FROM runtime AS functions
COPY --from=build --chown=root:root /src/dist/functions/server.bundle.mjs ./functions.mjs
CMD ["node", "functions.mjs"]
