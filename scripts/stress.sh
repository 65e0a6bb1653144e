#!/usr/bin/env bash
# Runs the whole Swift suite STRESS_RUNS times (default 20) with no retry, then prints two tables:
# each run's result, wall time and load, and each failing test's failure count over the runs.
# Arguments go to every `swift test` (e.g. --filter). Each run's output is kept under STRESS_LOGS
# (default .build/stress/<UTC time>/run-N.log). A run that takes longer than STRESS_RUN_TIMEOUT
# seconds (default 1800) is killed; the tests it had started and not finished are named.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs="${STRESS_RUNS:-20}"
run_timeout="${STRESS_RUN_TIMEOUT:-1800}"
for value in "$runs" "$run_timeout"; do
    if ! [[ "$value" =~ ^[1-9][0-9]*$ ]]; then
        echo "stress: STRESS_RUNS and STRESS_RUN_TIMEOUT must be positive integers, not '$value'" >&2
        exit 2
    fi
done
logs="${STRESS_LOGS:-$root/.build/stress/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$logs"
# What scripts/test.sh installs first (e.g. Jinja2 in .build/venv, which HomeAssistantControlTests
# needs): without it a run fails for a missing package, not a race. Always, since it takes under a
# second when everything is there: a series over a build copied into a new checkout (without its
# .build/venv*) failed 5 tests in every run.
"$root/scripts/setup.sh" test
# STRESS_SKIP_BUILD=1 runs an existing build as it is (e.g. a copy made while the checkout changes).
if [[ "${STRESS_SKIP_BUILD:-0}" != "1" ]]; then
    swift build --build-tests
fi
# The same width scripts/test.sh uses, so a failure here is one test.sh would meet.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}"
load() { cut -d' ' -f1 /proc/loadavg; }
# The names of the tests a Swift Testing console log reports in the given state
# ("failed after", "passed after", "started", ...), one per line, sorted.
tests_in() {
    grep -v 'Test run \|Test case passing' "$1" |
        sed -n "s/^.*\\(✘\\|✔\\|◇\\|➜\\) Test \\(.*\\) $2.*/\\2/p" |
        sed 's/ with [0-9]* test cases$//' | LC_ALL=C sort -u
}
failed_runs=0
# Each run's test process lists the children it starts under children/ (ChildProcess.swift); those
# it leaves running (a run killed at its time limit, a crash, an interrupted series) are stopped
# after the run, so they do not load the runs after it; the failures table notes the run.
children="$logs/children"
export BLEBRIDGE_TEST_CHILDREN="$children"
trap '"$root/scripts/kill-test-children.sh" "$children"' EXIT
# A run is stopped by killing its process tree: `swift test` and the test process it starts (in a
# process group of its own, which killing `swift test` or its group left running: a run killed at
# its time limit went on as an orphan). The children the test process listed, and theirs, are
# left to kill-test-children.sh, which lets each stop what it started. The run is waited for in
# the background, since bash runs a trap only once the command it waits for has ended: an
# interrupted series (Ctrl-C, SIGTERM) stops the run in progress at once.
run_pid=""
watchdog=""
run_tree() {
    local child
    echo "$1"
    for child in $(ps -o pid= --ppid "$1"); do
        [[ -e "$children/$child" ]] || run_tree "$child"
    done
}
stop_run() {
    [[ -z "$run_pid" ]] || kill -KILL $(run_tree "$run_pid") 2>/dev/null || true
}
interrupted() {
    stop_run
    [[ -z "$watchdog" ]] || kill "$watchdog" 2>/dev/null || true
    echo "stress: interrupted in run $run" >&2
    exit "$1"
}
trap 'interrupted 130' INT
trap 'interrupted 143' TERM
: >"$logs/failures"
: >"$logs/runs"
for ((run = 1; run <= runs; run++)); do
    log="$logs/run-$run.log"
    start=$SECONDS
    load_start=$(load)
    status=passed
    swift test --skip-build "$@" >"$log" 2>&1 &
    run_pid=$!
    # The time limit: a watchdog that stops the run unless the run ends first.
    (
        trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
        sleep "$run_timeout" &
        sleeper=$!
        wait "$sleeper"
        stop_run
    ) &
    watchdog=$!
    wait "$run_pid" || status=$?
    kill "$watchdog" 2>/dev/null || true
    wait "$watchdog" 2>/dev/null || true
    run_pid=""
    watchdog=""
    if [[ "$status" != passed ]]; then
        ((status == 137)) && status="killed after ${run_timeout} s" || status="FAILED"
        failed_runs=$((failed_runs + 1))
    fi
    # One line per failing test and run. A run that failed without a test failing (a crash of the
    # test process, a hang) is counted under its own name, with the tests it left unfinished.
    names=$(tests_in "$log" 'failed after')
    if [[ "$status" != passed && -z "$names" ]]; then
        unfinished=$(LC_ALL=C comm -23 <(tests_in "$log" 'started') <({
            tests_in "$log" 'passed after'
            tests_in "$log" 'skipped'
        } | LC_ALL=C sort))
        count=$(echo -n "$unfinished" | grep -c . || true)
        unfinished=$(echo "$unfinished" | head -n 8 | paste -sd' ')
        ((count <= 8)) || unfinished="$unfinished and $((count - 8)) more"
        names="(run $status without a failing test; unfinished: ${unfinished:-none}; see $log)"
    fi
    [[ -z "$names" ]] || echo "$names" >>"$logs/failures"
    left=$("$root/scripts/kill-test-children.sh" "$children" 2>&1 | grep -c . || true)
    if ((left > 0)); then
        echo "stress: run $run left children running; stopped them"
        echo "(run $run left children of the test process running: stopped after the run)" >>"$logs/failures"
    fi
    wall=$((SECONDS - start))
    count=$(echo -n "$names" | grep -c . || true)
    printf '%4d  %-8s %6d  %5s %5s  %6d\n' "$run" "${status%% *}" "$wall" "$load_start" "$(load)" \
        "$count" >>"$logs/runs"
    echo "stress: run $run/$runs $status in $wall s, load $load_start -> $(load) ($log)"
done
echo
echo "stress: $failed_runs of $runs runs failed (logs in $logs)"
echo " run  result     wall  load at start/end  failed tests"
cat "$logs/runs"
if [[ -s "$logs/failures" ]]; then
    echo
    echo "failures/runs  test"
    # Swift Testing's console names a test without its suite: the file that declares it is added.
    sort "$logs/failures" | uniq -c | sort -rn | while read -r n name; do
        where=""
        [[ "$name" =~ ^[A-Za-z_] ]] && where=$(grep -rlE "func ${name%%(*}\(" Tests | paste -sd' ' || true)
        printf '%8d/%-4d %s%s\n' "$n" "$runs" "$name" "${where:+  ($where)}"
    done
fi
((failed_runs == 0))
