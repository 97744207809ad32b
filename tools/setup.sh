#!/usr/bin/env bash
# Installs what is missing (Debian packages), then configures and builds fusebench into build/.
#
#   tools/setup.sh            build with the GPU backend auto-detected (CUDA if nvcc works, HIP if
#                             a HIP compiler works, else the CPU emulation only)
#   FUSEBENCH_GPU=none|cuda|hip tools/setup.sh     force a backend
#   BUILD_DIR=... tools/setup.sh                  build elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ git pkg-config libcli11-dev libeigen3-dev libfmt-dev nlohmann-json3-dev
          libgtest-dev libpugixml-dev python3 python3-jsonschema)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# nvcc lives outside PATH in the usual CUDA install; let CMake's detection see it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSEBENCH_GPU="${FUSEBENCH_GPU:-auto}"
cmake --build "$build_dir" --parallel "$(nproc)"
backend=$(sed -n "s/^FUSEBENCH_GPU_BACKEND_CHOSEN:INTERNAL=//p" "$build_dir/CMakeCache.txt")
echo "setup: built $build_dir/cli/fusebench (GPU backend: ${backend:-unknown})"
