#!/usr/bin/env bash
# Prints the tag of a saved hardware-stage build (ci/hardware.sh save-build / restore-build): a hash of the
# committed tree's files, documentation (docs/ and *.md) left out, so that a build made from one commit is
# restored for a later commit that changed prose alone and refused for any other change. Uncommitted
# changes to built files make the tag end in "-dirty" (the build is then of no commit).
set -euo pipefail
cd "$(dirname "$0")/.."
# Tab-separated: mode, type, object, then the path; paths of prose are dropped.
files=$(git ls-tree -r HEAD | awk -F '\t' '$2 !~ /^docs\// && $2 !~ /\.md$/')
tag=$(printf '%s\n' "$files" | sha1sum | cut -c1-40)
if [[ -n "$(git status --porcelain --untracked-files=no -- . ':(exclude)docs' ':(exclude)*.md')" ]]; then
  tag="$tag-dirty"
fi
echo "$tag"
