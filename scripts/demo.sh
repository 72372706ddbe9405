#!/usr/bin/env bash
# The one command that sets up a fresh machine and runs the demo: create a checkpoint,
# serve it over gRPC, stream a completion with a grpc-js client.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npm run --silent demo -- "$@"
