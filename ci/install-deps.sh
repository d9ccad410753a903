#!/usr/bin/env bash
# Installs the Debian packages peerreduce needs, only those missing. Usage: ci/install-deps.sh [build|test|hip]
#   build: compiler, CMake, Ninja (enough for ci/run-sim.sh)
#   test:  also GoogleTest, RapidCheck, gcovr, Open MPI, clang with libFuzzer (for ci/test.sh)
#   hip:   also the HIP compiler and runtime for AMD (ci/gpu-compile.sh hip)
set -euo pipefail
level="${1:-test}"
packages=(g++ cmake ninja-build)
if [[ "$level" == "test" || "$level" == "hip" ]]; then
  packages+=(libgtest-dev librapidcheck-dev gcovr libopenmpi-dev openmpi-bin clang clang-format libclang-rt-14-dev python3 python3-numpy python3-pytest)
fi
if [[ "$level" == "hip" ]]; then
  packages+=(hipcc libamdhip64-dev rocm-device-libs)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
