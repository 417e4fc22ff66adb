# syntax=docker/dockerfile:1
# One image for every Swarm function (env FUNCTION=assign|restart picks which),
# plus the reference worker as a second target:
#   docker build --target functions -t swarm .
#   docker build --target worker    -t swarm-worker .
# `npm run test:image` builds both targets from this file with buildah (no
# Docker engine) and runs them; see test/image/README.md.

# Node 26 is the Active LTS line (since October 2026).
ARG NODE_VERSION=26.10.0

# --- build: full dependency tree, TypeScript compiled to dist/, then bundled --
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY functions functions
COPY bin bin
COPY examples examples
COPY sdk sdk
RUN npm run build && npm run bundle

# --- shared runtime: no compiler, no dev tools, no node_modules, not root ----
# Each target runs its own bundle (esbuild, `npm run bundle`): Node loads one
# file in a fraction of the time it takes over node_modules' hundreds, and a
# cold start on a small CPU limit is mostly that load. Each bundle's source map
# ships beside it, unused unless NODE_OPTIONS=--enable-source-maps (stack
# traces then name the TypeScript sources; Node 26 parses the map at start,
# ~0.17 s more to a start on this project's machine, so it is off by default).
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
# uid 1000 is the image's `node` user; numeric so the kubelet can verify
# runAsNonRoot. The files stay root-owned: the process cannot modify its code.
USER 1000:1000
EXPOSE 8080

# --- the reference worker (examples/worker) -------------------------------------
# It runs on the TypeScript SDK (sdk/typescript), whose Kubernetes client is a few HTTPS calls.
FROM runtime AS worker
COPY --from=build --chown=root:root /src/dist/worker ./worker
ENV CONFIG_PATH=/etc/swarm/config.yml
CMD ["node", "worker/main.mjs"]

# The last stage is the default target.
# --- the functions (Knative Services swarm-assign, swarm-restart) -------------
FROM runtime AS functions
COPY --from=build --chown=root:root /src/dist/functions.mjs /src/dist/functions.mjs.map ./
CMD ["node", "functions.mjs"]
