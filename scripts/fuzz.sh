#!/usr/bin/env bash
# Runs every fuzz target of the module for as long as asked (default 30s
# each): scripts/fuzz.sh [duration] [extra go test flags...]. `go test ./...`
# runs their seed corpora (f.Add and testdata/fuzz/) on every CI run; this
# script is for the long runs. A failing input is written to the target's
# testdata/fuzz/ directory by go test; commit it once fixed. Every target
# runs even when one fails; the exit status says whether any did.
set -uo pipefail
cd "$(dirname "$0")/.."
time=${1:-30s}
shift || true
failed=()
while read -r file; do
	pkg=$(dirname "$file")
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "== $pkg $target ($time)"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$@" "$pkg" </dev/null; then
			failed+=("$pkg $target")
		fi
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v -e '^./bench/' -e '^./difftest/' | sort)
if ((${#failed[@]} > 0)); then
	printf 'FAILED: %s\n' "${failed[@]}"
	exit 1
fi
echo "all fuzz targets passed"
