#!/usr/bin/env bash
# Sets up (Debian packages), builds, and launches the desktop app on its starter model.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${WB_BUILD_DIR:-$here/build}"
bash "$here/scripts/setup.sh"
exec "$build_dir/bin/llm-workbench" "$@"
