#!/usr/bin/env bash
# Fails when a tracked C, C++, CUDA or HIP source differs from what clang-format (.clang-format: Google
# base, 120 columns) makes of it, and lists the files. Run `ci/check-format.sh --fix` to reformat them.
# Fuzz corpora are data, not code, and are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter="${CLANG_FORMAT:-clang-format}"
if ! command -v "$formatter" > /dev/null; then
  echo "check-format: $formatter not found; install Debian's clang-format (ci/install-deps.sh test)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^fuzz/corpus/')
if [[ "${1:-}" == "--fix" ]]; then
  "$formatter" -i "${files[@]}"
  echo "check-format: reformatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$formatter" --dry-run --Werror "$f" > /dev/null 2>&1; then bad+=("$f"); fi
done
if ((${#bad[@]} > 0)); then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted (run ci/check-format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
