#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer harnesses of Fuzz/ with AddressSanitizer (release, into
# .build/fuzz) and runs each target for FUZZ_SECONDS (default 60) on its corpus, one at a time.
# An input that runs over 1 s counts as a hang (-timeout=1, confirmed by a replay: see below). Prints and writes a table of inputs
# executed, coverage (libFuzzer's cov and ft), corpus size and crashes per target to
# .build/fuzz/results.md; crashing inputs are kept in .build/fuzz/artifacts/<target>/. Exits
# non-zero when any target crashed, hung, leaked or reported a sanitizer error.
#   FUZZ_SECONDS=600 ./scripts/fuzz.sh                 # longer
#   FUZZ_TARGETS="fuzz-json fuzz-commands" ./scripts/fuzz.sh
#   FUZZ_RUNS=1000000 ./scripts/fuzz.sh                # stop each target after that many inputs
#   FUZZ_SKIP_BUILD=1 ./scripts/fuzz.sh                # run what .build/fuzz holds
# Not part of scripts/test.sh (CI budget); see docs/testing.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:--1}
targets=${FUZZ_TARGETS:-fuzz-characteristics fuzz-advertisements fuzz-encrypted-advertisements fuzz-commands fuzz-json fuzz-byte-layouts fuzz-configuration fuzz-dbus-message fuzz-scenario}
scratch=$root/.build/fuzz
if [[ "${FUZZ_SKIP_BUILD:-0}" != "1" ]]; then
    swift build --package-path Fuzz --scratch-path "$scratch" -c release \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -swift-version -Xswiftc 6
fi
bin=$(swift build --package-path Fuzz --scratch-path "$scratch" -c release --show-bin-path)
# The Swift runtime's backtracer reads memory ASan considers poisoned and turns a Swift trap into
# a second, misleading ASan report (unknown-crash in memserver_read); libFuzzer prints the stack.
export SWIFT_BACKTRACE=enable=no
results=${FUZZ_RESULTS:-$scratch/results.md}
{
    echo "| target | seconds | inputs executed | inputs/s | cov | ft | corpus | crashes | stalls |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >"$results"
failed=0
for target in $targets; do
    corpus=$scratch/corpus/$target
    artifacts=$scratch/artifacts/$target
    log=$scratch/logs/$target.log
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    touch "$log.start" "$log.begin"
    cp -n Fuzz/Seeds/"$target"/* "$corpus"/ 2>/dev/null || true
    echo "fuzz: $target for ${seconds}s (log $log)" >&2
    # libFuzzer's -timeout is wall-clock time. On a loaded machine a scheduling stall can pass
    # 1 s, so an input reported as a timeout is replayed alone: a replay over 1 s is a hang (a
    # failure); a quick replay is counted as a stall and fuzzing resumes for the time left.
    : >"$log"
    status=0 executed=0 stalls=0 started=$(date +%s)
    while true; do
        left=$((seconds - ($(date +%s) - started)))
        ((left > 0)) || break
        status=0
        # FUZZ_RUNS counts over the resumed runs of a target, not per run.
        remaining=$runs
        if ((runs > 0)); then
            remaining=$((runs - executed))
            ((remaining > 0)) || break
        fi
        "$bin/$target" -max_total_time="$left" -runs="$remaining" -timeout=1 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log.run" 2>&1 || status=$?
        cat "$log.run" >>"$log"
        units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.run" | tail -1)
        if [[ -z "$units" ]]; then  # a run that stopped on an input prints no final stats
            units=$(grep -E '^#[0-9]+' "$log.run" | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
        fi
        executed=$((executed + ${units:-0}))
        echo "stat::cumulative_executed_units: $executed" >>"$log"
        timeout_input=$(find "$artifacts" -name 'timeout-*' -newer "$log.start" 2>/dev/null | head -1)
        if ((status == 70)) && [[ -n "$timeout_input" ]]; then
            # libFuzzer's own figure for the input ("Executed … in N ms"), not the process's
            # start-up, which alone can pass 1 s on a loaded machine.
            replay_ms=$("$bin/$target" -runs=1 -timeout=30 "$timeout_input" 2>&1 \
                | sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p' | tail -1 || true)
            replay_ms=${replay_ms:-999999}
            if ((replay_ms < 1000)); then
                stalls=$((stalls + 1))
                echo "fuzz: $target: a stall, not a hang ($(basename "$timeout_input") replays in ${replay_ms} ms)" >&2
                mkdir -p "$scratch/stalls/$target"
                mv "$timeout_input" "$scratch/stalls/$target/"
                touch "$log.start"
                status=0  # a stall is no failure, also when no time is left to resume
                continue
            fi
        fi
        break
    done
    elapsed=$(($(date +%s) - started))
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    entries=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
    # This run's artifacts only: the directory keeps those of earlier runs.
    crashes=$(find "$artifacts" -type f -newer "$log.begin" | wc -l)
    if ((status != 0)) && ((crashes == 0)); then crashes="exit $status"; fi
    if ((status != 0)); then
        failed=1
        echo "fuzz: $target FAILED (exit $status); artifacts in $artifacts; log $log" >&2
        grep -E 'ERROR: |SUMMARY: |Fatal error|deadly signal|Test unit written' "$log" | head -5 >&2 || true
    fi
    rate=""
    if [[ -n "$executed" && -n "$elapsed" && "$elapsed" -gt 0 ]]; then rate=$((executed / elapsed)); fi
    echo "| $target | $elapsed | $executed | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${entries:-?} | $crashes | $stalls |" >>"$results"
done
cat "$results"
exit "$failed"
