#!/usr/bin/env bash
# How the build treats nccl.h, with fake headers in WORK_DIR (configure runs only, nothing is built; a few
# seconds in all):
# - one older than the API libpeerreduce_nccl defines (NCCL 2.10) fails the configure, which names the
#   file, its version and the minimum; the compiler refuses it too (nccl/nccl_header_version.h), for
#   builds that do not go through CMake; one of the minimum (2.28) passes both;
# - a missing nccl.h is a WARNING naming PEERREDUCE_NCCL_INCLUDE_DIR by default (PEERREDUCE_WITH_NCCL=AUTO)
#   and an error with PEERREDUCE_WITH_NCCL=ON.
# usage: header_checks.sh CMAKE SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER
set -euo pipefail
cmake=$1 source=$2 work=$3 cc=$4 cxx=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/old" "$work/new" "$work/empty"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 10\n#define NCCL_PATCH 3\n' > "$work/old/nccl.h"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 0\n' > "$work/new/nccl.h"
touch "$work/old/cuda_runtime.h" "$work/new/cuda_runtime.h"

# configure NAME HEADER_DIR MODE: configures the project (its libraries alone, no GPU) into WORK_DIR/NAME,
# its output in WORK_DIR/NAME.log; returns the configure's exit status.
configure() {
  "$cmake" -S "$source" -B "$work/$1" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DPEERREDUCE_GPU=none -DPEERREDUCE_BUILD_TESTS=OFF -DPEERREDUCE_BUILD_BENCH=OFF -DPEERREDUCE_BUILD_EXAMPLES=OFF \
    -DPEERREDUCE_BUILD_TOOLS=OFF -DPEERREDUCE_INSTALL=OFF -DPEERREDUCE_WITH_MPI=OFF \
    -DPEERREDUCE_NCCL_INCLUDE_DIR="$2" -DPEERREDUCE_WITH_NCCL="$3" > "$work/$1.log" 2>&1
}
# says NAME TEXT: the log says TEXT (CMake wraps its messages: spaces and line breaks are squeezed first).
says() {
  tr -s ' \n' '  ' < "$work/$1.log" | grep -qF -- "$2" || { cat "$work/$1.log"; fail "$1: the output lacks '$2'"; }
}

configure old "$work/old" AUTO && { cat "$work/old.log"; fail "an nccl.h of NCCL 2.10 was accepted"; }
says old "CMake Error"
says old "$work/old/nccl.h is NCCL 2.10"
says old "needs nccl.h of NCCL 2.28 or later"
echo "configure refuses nccl.h of NCCL 2.10, naming the file, its version and the minimum"

configure new "$work/new" AUTO || { cat "$work/new.log"; fail "an nccl.h of NCCL 2.28 was refused"; }
says new "$work/new/nccl.h (NCCL 2.28)"
echo "configure accepts nccl.h of NCCL 2.28"

configure missing "$work/empty" AUTO || { cat "$work/missing.log"; fail "AUTO without nccl.h failed the configure"; }
says missing "CMake Warning"
says missing "libpeerreduce_nccl.so (the NCCL-compatible library) is not built"
says missing "-DPEERREDUCE_NCCL_INCLUDE_DIR"
echo "AUTO without nccl.h: a warning naming PEERREDUCE_NCCL_INCLUDE_DIR"

configure required "$work/empty" ON && { cat "$work/required.log"; fail "ON without nccl.h configured"; }
says required "CMake Error"
says required "-DPEERREDUCE_NCCL_INCLUDE_DIR"
echo "ON without nccl.h: an error"

# compile DIR: a source that includes nccl.h from DIR and the library's check, as exports.cc does.
compile() {
  printf '#include <nccl.h>\n#include "nccl/nccl_header_version.h"\n' |
    "$cxx" -fsyntax-only -x c++ -I"$1" -I"$source" - > "$work/compile.log" 2>&1
}
compile "$work/old" && fail "the compiler accepted nccl.h of NCCL 2.10"
grep -qF "needs nccl.h of NCCL 2.28 or later" "$work/compile.log" ||
  { cat "$work/compile.log"; fail "the compiler's error does not name the minimum"; }
compile "$work/new" || { cat "$work/compile.log"; fail "the compiler refused nccl.h of NCCL 2.28"; }
echo "the compiler refuses nccl.h of NCCL 2.10 and accepts 2.28"
echo "nccl header checks: passed"
