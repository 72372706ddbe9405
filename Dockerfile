# The Tessera image: the `tessera` CLI (operator, router and worker in one image) on Node 24 and Debian
# bookworm slim. Build it from the repository root, tagged with charts/tessera/Chart.yaml's appVersion,
# which is the image the chart, the operator's manifests and the default WorkerPool name:
#   docker build -t ghcr.io/tessera-dev/tessera:0.1.0 .        (podman build works the same)
#   docker run --rm ghcr.io/tessera-dev/tessera:0.1.0 serve --model /models/m --host 0.0.0.0
# It runs as uid/gid 65532 (the operator's runAsUser) and needs no write access to its root file
# system: the only writable place is TMPDIR (/tmp), an emptyDir or tmpfs mounted by whoever runs it.
# scripts/build-image.sh builds this file with docker/podman/buildah, or, on a machine without a
# container engine or base image, assembles the same image from the same steps.
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# Production dependencies only (no devDependencies, not the devtools workspace's), installed with
# onnxruntime-node's CPU build: its postinstall downloads no CUDA files (.npmrc and the env both say
# skip), and the prebuilt binaries of other platforms are removed. Behind a TLS-intercepting proxy,
# hand npm the proxy's CA: --build-arg NODE_EXTRA_CA_CERTS=/ca.crt with the file mounted there
# (podman/buildah: --volume /etc/ssl/certs/ca-certificates.crt:/ca.crt:ro); it stays out of the image.
FROM ${NODE_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip
COPY package.json package-lock.json .npmrc ./
COPY devtools/package.json devtools/
RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund --loglevel=error \
 && keep="linux/$(node -p process.arch)" \
 && for dir in node_modules/onnxruntime-node/bin/napi-v*/*/*; do \
      case "$dir" in *"/$keep") ;; *) rm -rf "$dir" ;; esac; \
    done

# The runtime: Node, the production node_modules and the TypeScript sources Node runs by type
# stripping (specs, test fixtures and the dev cluster are left out by .dockerignore). The model
# factory comes along so `tessera model create` works in the image too.
FROM ${NODE_IMAGE}
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && ln -s /app/services/cli/bin/tessera.js /usr/local/bin/tessera
ENV NODE_ENV=production HOME=/tmp TMPDIR=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json ./
COPY proto proto
COPY services services
COPY operator operator
COPY devtools/model-factory devtools/model-factory
USER 65532:65532
ENTRYPOINT ["tessera"]
CMD ["--help"]
