#!/usr/bin/env bash
# Installs this build into a temporary prefix and uses it as an application would, nothing of the
# source tree but the examples' sources:
#   1. the installed tree: headers (public only), libraries with their SONAMEs, CMake package,
#      pkg-config files, the command;
#   2. the shared libraries export their public API only (check_exports.py on the installed files; the
#      NCCL-compatible library NCCL's functions only);
#   3. examples/ configured out of tree with find_package, C and C++, shared and static, run;
#   4. the same sources built with pkg-config (peerreduce, peerreduce-static), run;
#   5. find_package refuses a version or a component it cannot give, by name;
#   6. the MPI library through pkg-config under mpirun: a bootstrap from MPI, and without a GPU a typed
#      prUnavailable on every rank.
# usage: installed_use.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER "CONSUMER_FLAGS"
# CONSUMER_FLAGS: what objects of this build need at link time (sanitizers, coverage).
set -euo pipefail
build=$1 source=$2 work=$3 cc=$4 cxx=$5 flags=$6
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/peerreduce/peerreduce.h include/peerreduce/peerreduce_sim.h include/peerreduce/version.h \
         include/peerreduce/communicator.h include/peerreduce/simulator.h lib/libpeerreduce.a \
         lib/libpeerreduce_sim.a lib/cmake/peerreduce/peerreduce-config.cmake \
         lib/cmake/peerreduce/peerreduce-config-version.cmake lib/pkgconfig/peerreduce.pc \
         lib/pkgconfig/peerreduce-static.pc bin/peerreduce-sim; do
  [[ -e "$prefix/$f" ]] || fail "$f is not installed"
done
# Only public headers: nothing from the sources' folders (api/, gpu/, engine.h, ...).
extra=$(find "$prefix/include" -type f ! -path "$prefix/include/peerreduce/*.h" | head -5)
[[ -z "$extra" ]] || fail "installed headers outside include/peerreduce: $extra"
installed_headers=$(ls "$prefix/include/peerreduce" | sort)
public_headers=$( (ls "$source/lib/include/peerreduce" "$source/sim/include/peerreduce"; echo version.h) |
  grep '\.h$' | sort)
if [[ -e "$prefix/lib/libpeerreduce_mpi.so" ]]; then has_mpi=1; else has_mpi=0; fi
if [[ $has_mpi == 0 ]]; then
  public_headers=$(echo "$public_headers" | grep -v -e '^peerreduce_mpi.h$' -e '^mpi_bootstrap.h$')
fi
[[ "$installed_headers" == "$public_headers" ]] || fail "installed headers differ from the public ones:
$(diff <(echo "$public_headers") <(echo "$installed_headers"))"
soname=$(readelf -d "$prefix/lib/libpeerreduce.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
version=$(sed -n 's/^#define PEERREDUCE_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/peerreduce/version.h")
[[ "$soname" == "libpeerreduce.so.${version%.*}" ]] || fail "SONAME is '$soname' for version $version"
[[ -e "$prefix/lib/libpeerreduce.so.$version" ]] || fail "libpeerreduce.so.$version is not installed"
echo "installed: $(find "$prefix" -type f | wc -l) files, libpeerreduce.so SONAME $soname, version $version"

step "exported symbols of the installed shared libraries"
headers="$prefix/include/peerreduce"
python3 "$source/tests/package/check_exports.py" "$prefix/lib/libpeerreduce.so" --headers "$headers" \
  --c-functions-of "$headers/peerreduce.h" "$headers/peerreduce_sim.h"
if [[ $has_mpi == 1 ]]; then
  python3 "$source/tests/package/check_exports.py" "$prefix/lib/libpeerreduce_mpi.so" --headers "$headers" \
    --c-functions-of "$headers/peerreduce_mpi.h"
fi
# The NCCL-compatible library, where this build made one: installed beside the others, NCCL's names only.
if [[ -e "$build/nccl/libpeerreduce_nccl.so" ]]; then
  [[ -e "$prefix/lib/libpeerreduce_nccl.so" ]] || fail "libpeerreduce_nccl.so was built but is not installed"
  python3 "$source/tests/nccl/check_nccl_exports.py" "$prefix/lib/libpeerreduce_nccl.so" \
    "$source/nccl/nccl_functions.h" "$source/tests/nccl/nccl_2_28_api.txt" "$source/docs/NCCL.md"
fi

step "examples out of tree with find_package (C and C++, shared and static)"
cmake -S "$source/examples" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DPEERREDUCE_EXAMPLES_RUN=ON > "$work/examples-configure.log" ||
  { cat "$work/examples-configure.log"; fail "configuring the examples against the installed package"; }
cmake --build "$work/examples" > "$work/examples-build.log" ||
  { cat "$work/examples-build.log"; fail "building the examples against the installed package"; }
# Nothing of the source tree may be on the include path, and no C++ standard was asked for by the
# examples: the package's targets bring -std=c++20 themselves.
if grep -q -e "-I$source" -e "-isystem $source" "$work/examples/compile_commands.json" 2>/dev/null; then
  fail "the examples' compile commands name the source tree"
fi
ctest --test-dir "$work/examples" --output-on-failure
# What each example needs at run time (read whole first: `grep -q` in a pipe under pipefail would fail
# on objdump's SIGPIPE).
needs() { objdump -p "$work/examples/$1" | sed -n 's/^ *NEEDED *//p'; }
shared_needs=$(needs sim_allreduce)
static_needs=$(needs sim_allreduce_static)
grep -q '^libpeerreduce\.so' <<< "$shared_needs" || fail "sim_allreduce is not linked to libpeerreduce.so: $shared_needs"
if grep -q '^libpeerreduce' <<< "$static_needs"; then fail "sim_allreduce_static needs libpeerreduce.so"; fi
echo "sim_allreduce needs $(grep '^libpeerreduce' <<< "$shared_needs"); sim_allreduce_static needs no libpeerreduce"

step "the same examples with pkg-config"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
rpath="-Wl,-rpath,$(pkg-config --variable=libdir peerreduce)"
mkdir -p "$work/pkg"
# shellcheck disable=SC2046,SC2086  # flags are word lists
{
  "$cc" -std=c11 $flags $(pkg-config --cflags peerreduce) "$source/examples/sim_allreduce_c.c" -o "$work/pkg/c_shared" \
    $(pkg-config --libs peerreduce) $rpath
  "$cxx" -std=c++20 $flags $(pkg-config --cflags peerreduce) "$source/examples/sim_allreduce.cpp" \
    -o "$work/pkg/cxx_shared" $(pkg-config --libs peerreduce) $rpath
  "$cc" -std=c11 $flags $(pkg-config --cflags peerreduce-static) "$source/examples/sim_allreduce_c.c" \
    -o "$work/pkg/c_static" $(pkg-config --libs peerreduce-static)
  "$cxx" -std=c++20 $flags $(pkg-config --cflags peerreduce-static) "$source/examples/sim_allreduce.cpp" \
    -o "$work/pkg/cxx_static" $(pkg-config --libs peerreduce-static)
}
for program in c_shared cxx_shared c_static cxx_static; do
  echo "$program: $("$work/pkg/$program" | tail -1)"
done
[[ $(pkg-config --modversion peerreduce) == "$version" ]] || fail "pkg-config reports another version"

step "find_package refuses what it cannot give"
probe() {  # probe NAME ARGS: configure a one-line project that calls find_package(peerreduce ARGS)
  local dir="$work/find-$1"
  mkdir -p "$dir"
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(probe C)\nfind_package(peerreduce %s)\n' "$2" \
    > "$dir/CMakeLists.txt"
  cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" > "$dir/log" 2>&1
}
probe version-too-new "99.0 CONFIG REQUIRED" && fail "find_package(peerreduce 99.0) succeeded"
grep -q "99.0" "$work/find-version-too-new/log" || fail "the version refusal does not name the version"
probe unknown-component "CONFIG REQUIRED COMPONENTS shiny" && fail "an unknown component was accepted"
grep -q "no component 'shiny'" "$work/find-unknown-component/log" || fail "the unknown component is not named"
probe good "${version%.*} CONFIG REQUIRED COMPONENTS sim" || { cat "$work/find-good/log"; fail "find_package failed"; }
echo "refused: version 99.0, component 'shiny'; accepted: ${version%.*} with sim"

if [[ $has_mpi == 1 ]] && command -v mpirun > /dev/null; then
  step "the MPI library through pkg-config, under mpirun -np 2, on a machine without a GPU"
  # shellcheck disable=SC2046,SC2086
  "$cc" -std=c11 $flags $(pkg-config --cflags peerreduce-mpi) "$source/tests/package/mpi_bootstrap_without_gpu.c" \
    -o "$work/pkg/mpi_without_gpu" $(pkg-config --libs peerreduce-mpi) $rpath
  gpu=$(sed -n 's/^set(PEERREDUCE_GPU "\(.*\)")$/\1/p' "$prefix/lib/cmake/peerreduce/peerreduce-config.cmake")
  if [[ "$gpu" == none ]]; then expected=unsupported; else expected=unavailable; fi
  # Open MPI's own allocations are not ours to check for leaks; it refuses root unless told.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1 timeout 120 mpirun -np 2 "$work/pkg/mpi_without_gpu" "$expected"
fi
echo "installed use: passed"
