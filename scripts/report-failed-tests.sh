#!/usr/bin/env bash
# report-failed-tests.sh NAME LOG: after a Swift Testing run that failed, names its failed tests
# from its output in LOG on stderr, prefixed with NAME (the calling script), or says that none
# failed (then the test process itself crashed). Always exits 1, the failed run's status.
set -uo pipefail
name=${1:?usage: report-failed-tests.sh NAME LOG}
log=${2:?usage: report-failed-tests.sh NAME LOG}
failed=$(grep -av '✘ Test run with' "$log" | sed -n 's/^.*✘ Test \(.*\) failed after .*/\1/p' | sort -u || true)
if [[ -z "$failed" ]]; then
    echo "$name: FAILED without a failing test (a crash of the test process?): see the output above" >&2
else
    echo "$name: FAILED ($(echo "$failed" | wc -l) tests):" >&2
    echo "$failed" | sed 's/^/  /' >&2
fi
exit 1
