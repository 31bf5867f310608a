#!/usr/bin/env bash
# Fails if any C++ source differs from what clang-format (with the repo's .clang-format) makes.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find . -name '*.cpp' -o -name '*.h')
bad=0
for f in "${files[@]}"; do
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then
    echo "check-format: $f is not clang-formatted (run: clang-format -i $f)" >&2
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "check-format: ${#files[@]} files clean"
exit "$bad"
