# syntax=docker/dockerfile:1
# One image for every Swarm function (env FUNCTION=assign|restart picks which),
# plus the reference worker as a second target:
#   docker build --target functions -t swarm .
#   docker build --target worker    -t swarm-worker .
# and the Go and Python reference workers (examples/worker-go, examples/worker-python):
#   docker build --target worker-go     -t swarm-worker-go .
#   docker build --target worker-python -t swarm-worker-python .
# `npm run test:image` builds both targets from this file with buildah (no
# Docker engine) and runs them; see test/image/README.md.

# Node 26 is the Active LTS line (since October 2026).
ARG NODE_VERSION=26.10.0
# The Go worker's toolchain (a build stage only: the image ships one static binary).
ARG GO_VERSION=1.26.8
# Debian bookworm's python3 (test/image makes the base from Debian's packages).
ARG PYTHON_VERSION=3.11

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

# --- the Go reference worker (examples/worker-go on sdk/go) ---------------------
# A static binary (no cgo) on an empty image: no shell, no libc, nothing to patch.
FROM golang:${GO_VERSION}-bookworm AS build-go
WORKDIR /src
COPY sdk/go/go.mod sdk/go/go.sum sdk/go/
COPY examples/worker-go/go.mod examples/worker-go/go.sum examples/worker-go/
RUN cd examples/worker-go && go mod download
COPY sdk/go sdk/go
COPY examples/worker-go examples/worker-go
RUN cd examples/worker-go && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/worker .

FROM scratch AS worker-go
COPY --from=build-go /out/worker /worker
# Numeric, so the kubelet can verify runAsNonRoot (the image has no /etc/passwd).
USER 1000:1000
ENV CONFIG_PATH=/etc/swarm/config.yml \
    PORT=8080
EXPOSE 8080
CMD ["/worker"]

# --- the Python reference worker (examples/worker-python on sdk/python) ----------
# The SDK installed from its own pyproject (its dependency, PyYAML, from PyPI)
# into a venv in a build stage; the runtime copies the venv and the worker only.
FROM python:${PYTHON_VERSION}-slim-bookworm AS build-python
RUN python3 -m venv /opt/venv
COPY sdk/python /src/sdk/python
RUN /opt/venv/bin/pip install --no-cache-dir /src/sdk/python

FROM python:${PYTHON_VERSION}-slim-bookworm AS worker-python
COPY --from=build-python /opt/venv /opt/venv
COPY examples/worker-python/worker.py /app/worker.py
WORKDIR /app
# Unbuffered: a report line reaches the pod's log when it is written. No
# bytecode files: the root filesystem is read-only in the pool's pods.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CONFIG_PATH=/etc/swarm/config.yml \
    PORT=8080
USER 1000:1000
EXPOSE 8080
CMD ["python3", "worker.py"]

# The last stage is the default target.
# --- the functions (Knative Services swarm-assign, swarm-restart) -------------
FROM runtime AS functions
COPY --from=build --chown=root:root /src/dist/functions.mjs /src/dist/functions.mjs.map ./
CMD ["node", "functions.mjs"]
