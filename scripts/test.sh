#!/usr/bin/env bash
# The one command that sets up a fresh machine and runs every test (lint, types, unit, e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npm test --silent -- "$@"
