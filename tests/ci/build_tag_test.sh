#!/usr/bin/env bash
# ci/build_tag.sh in a scratch repository: the tag stays for a change of prose, changes for any other file,
# and says "-dirty" while a built file has uncommitted changes. Usage: build_tag_test.sh PROJECT_SOURCE_DIR
set -euo pipefail
source_dir="${1:?project source dir}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
git init -q .
git config user.email test@example.invalid
git config user.name test
mkdir -p ci docs lib
cp "$source_dir/ci/build_tag.sh" ci/
echo 'int f();' > lib/a.cc
echo 'prose' > docs/NOTES.txt
echo '# readme' > README.md
git add -A && git commit -qm one
fail() { echo "build_tag_test: $*" >&2; exit 1; }
first=$(ci/build_tag.sh)
[[ "$first" =~ ^[0-9a-f]{40}$ ]] || fail "the tag '$first' is not 40 hex digits"
echo 'more prose' >> docs/NOTES.txt && echo 'more' >> README.md
[[ "$(ci/build_tag.sh)" == "$first" ]] || fail "uncommitted prose changed the tag"
git commit -qam prose
[[ "$(ci/build_tag.sh)" == "$first" ]] || fail "a commit of prose alone changed the tag"
echo 'int g();' >> lib/a.cc
[[ "$(ci/build_tag.sh)" == "$first-dirty" ]] || fail "an uncommitted source change is not marked dirty: $(ci/build_tag.sh)"
git commit -qam code
second=$(ci/build_tag.sh)
[[ "$second" =~ ^[0-9a-f]{40}$ && "$second" != "$first" ]] || fail "a committed source change kept the tag ($second)"
echo "build_tag_test: prose keeps the tag, code changes it, uncommitted code is dirty"
