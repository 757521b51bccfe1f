#!/usr/bin/env bash
# One idempotent set-up for a fresh Debian 12 machine: installs every Debian package the build,
# the app and the tests need, then configures and builds into build/ (or $WB_BUILD_DIR).
# Usage: scripts/setup.sh [--no-build] [extra cmake -D options...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${WB_BUILD_DIR:-$here/build}"

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenblas-dev nlohmann-json3-dev
  qt6-base-dev qt6-base-dev-tools qt6-declarative-dev qt6-declarative-dev-tools
  qt6-charts-dev qt6-httpserver-dev qt6-websockets-dev libqt6sql6-sqlite libqt6svg6
  qml6-module-qtquick qml6-module-qtqml qml6-module-qtqml-models qml6-module-qtqml-workerscript
  qml6-module-qtquick-controls qml6-module-qtquick-layouts qml6-module-qtquick-window
  qml6-module-qtquick-templates qml6-module-qtquick-dialogs qml6-module-qtquick-shapes
  qml6-module-qttest qml6-module-qt-labs-settings qml6-module-qt-labs-folderlistmodel qml6-module-qtcore qml6-module-qtcharts
  qt6-qpa-plugins xvfb xauth fonts-dejavu-core
  clang libclang-rt-14-dev python3 python3-venv
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
