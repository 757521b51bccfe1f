#!/usr/bin/env bash
# Sets up (Debian packages), builds and runs every test with CTest, headless.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${WB_BUILD_DIR:-$here/build}"
bash "$here/scripts/setup.sh" "$@"
export QT_QPA_PLATFORM=offscreen
cd "$build_dir"
ctest --output-on-failure --timeout 900 -j "$(nproc)"
