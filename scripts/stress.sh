#!/usr/bin/env bash
# Runs the whole Swift suite STRESS_RUNS times (default 20) with no retry and prints, at the end,
# how many runs each failing test failed in. Arguments go to every `swift test` (e.g. --filter).
# Each run's output is kept under STRESS_LOGS (default .build/stress/<timestamp>/run-N.log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs="${STRESS_RUNS:-20}"
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
    echo "stress: STRESS_RUNS must be a positive integer, not '$runs'" >&2
    exit 2
fi
logs="${STRESS_LOGS:-$root/.build/stress/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$logs"
# What scripts/test.sh installs first (e.g. Jinja2 in .build/venv, which HomeAssistantControlTests
# needs): without it a run fails for a missing package, not a race.
"$root/scripts/setup.sh" test
swift build --build-tests
# The same width scripts/test.sh uses, so a failure here is one test.sh would meet.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}"
failed_runs=0
: >"$logs/failures"
for ((run = 1; run <= runs; run++)); do
    log="$logs/run-$run.log"
    start=$SECONDS
    if swift test --skip-build "$@" >"$log" 2>&1; then
        status=passed
    else
        status=FAILED
        failed_runs=$((failed_runs + 1))
    fi
    # One line per failing test and run; a run that failed without a test failing (a crash of the
    # test process, a build problem) is counted under its own name so it is never lost.
    names=$(grep -v '✘ Test run with' "$log" | sed -n 's/^.*✘ Test \(.*\) failed after .*/\1/p' | sort -u)
    if [[ "$status" == FAILED && -z "$names" ]]; then
        names="(run failed without a failing test: see $log)"
    fi
    [[ -z "$names" ]] || echo "$names" >>"$logs/failures"
    echo "stress: run $run/$runs $status in $((SECONDS - start)) s ($log)"
done
echo
echo "stress: $failed_runs of $runs runs failed (logs in $logs)"
if [[ -s "$logs/failures" ]]; then
    echo "failures  test"
    sort "$logs/failures" | uniq -c | sort -rn | awk '{n=$1; $1=""; printf "%8d %s\n", n, substr($0, 2)}'
fi
((failed_runs == 0))
