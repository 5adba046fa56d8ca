#!/usr/bin/env bash
# Runs every fuzz target of the module for as long as asked (default 30s
# each): scripts/fuzz.sh [duration]. `go test ./...` runs their seed corpora
# on every CI run; this script is for the long runs.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-30s}
grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./bench/' | while read -r file; do
	pkg=$(dirname "$file")
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "== $pkg $target ($time)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg"
	done
done
