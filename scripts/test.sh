#!/usr/bin/env bash
# The test command: installs what is missing, checks formatting, builds and runs every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"
swift format lint --strict --recursive Package.swift Sources Tests
swift build --build-tests
swift test --skip-build "$@"
