#!/usr/bin/env bash
# Runs every fuzz target of the module for as long as asked (default 30s
# each): scripts/fuzz.sh [--report DIR] [duration] [extra go test flags...].
# `go test ./...` runs their seed corpora (f.Add and testdata/fuzz/) on
# every CI run; this script is for the timed runs. Every target runs even
# when one fails.
#
# Without --report (the long runs, on demand) a failing input stays where
# go test writes it, in the target's testdata/fuzz/ directory, to be
# committed once fixed, and the exit status says whether any target failed.
#
# With --report DIR (CI) a run reports and never fails: what a target finds
# is an old bug, not the change under test. Each failing target's output
# and the inputs it wrote are moved to DIR/<package>/<target>/, leaving the
# checkout clean; the script prints what it found and where, and exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."
report=
if [[ ${1:-} == --report ]]; then
	report=${2:?--report needs a directory}
	shift 2
	mkdir -p "$report"
	report=$(cd "$report" && pwd)
fi
time=${1:-30s}
shift || true

# inputs lists the files of a target's corpus directory, one a line.
inputs() {
	if [[ -d $1 ]]; then
		find "$1" -maxdepth 1 -type f | sort
	fi
}

failed=()
unfound=()
while read -r file; do
	pkg=$(dirname "$file")
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "== $pkg $target ($time)"
		if [[ -z $report ]]; then
			if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$@" "$pkg" </dev/null; then
				failed+=("$pkg $target")
			fi
			continue
		fi
		corpus="$pkg/testdata/fuzz/$target"
		before=$(inputs "$corpus")
		log=$(mktemp)
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$@" "$pkg" </dev/null >"$log" 2>&1; then
			rm -f "$log"
			continue
		fi
		out="$report/${pkg#./}/$target"
		mkdir -p "$out"
		mv "$log" "$out/output.txt"
		new=$(comm -13 <(echo "$before") <(inputs "$corpus"))
		if [[ -n $new ]]; then
			failed+=("$pkg $target")
		else
			# go test's fuzzer can end a run on its own -fuzztime deadline
			# with "context deadline exceeded" and no failing input (a
			# worker busy when time ran out): nothing to reproduce.
			unfound+=("$pkg $target")
		fi
		echo "$new" | while read -r found; do
			[[ -n $found ]] || continue
			mv "$found" "$out/"
			echo "   found $(basename "$found"): $(sed -n 2p "$out/$(basename "$found")" | cut -c1-200)"
		done
		# A corpus directory the run created holds nothing now.
		rmdir "$corpus" "$pkg/testdata/fuzz" "$pkg/testdata" 2>/dev/null || true
		echo "   saved in $out (output.txt has go test's report)"
		sed -n '/--- FAIL/,$p' "$out/output.txt" | head -20 | sed 's/^/   | /'
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v -e '^./bench/' -e '^./difftest/' | sort)
if ((${#unfound[@]} > 0)); then
	printf 'FAILED WITHOUT AN INPUT (see its output.txt): %s\n' "${unfound[@]}"
fi
if ((${#failed[@]} > 0)); then
	printf 'FAILED: %s\n' "${failed[@]}"
	if [[ -n $report ]]; then
		echo "the timed fuzzing found failing inputs, saved in $report; reported, not failing the run"
		exit 0
	fi
	exit 1
fi
if ((${#unfound[@]} > 0)); then
	echo "no fuzz target found a failing input; the runs above failed without one, reported, not failing the run"
	exit 0
fi
echo "all fuzz targets passed"
