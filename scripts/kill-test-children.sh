#!/usr/bin/env bash
# kill-test-children.sh DIR [GRACE]: stops the test children listed in DIR that still run.
#
# A test process lists each child it starts (a broker, a private D-Bus daemon, a gateway, a
# simulator) in the directory named by BLEBRIDGE_TEST_CHILDREN, a file per child named by its PID
# and holding its start time, and removes the file when it releases the child
# (Tests/TestSupport/ChildProcess.swift). A test process that dies first (a run killed at its time
# limit, or by hand) leaves its children running as orphans, which would load the runs after it.
# This sends SIGTERM to every listed child that still runs (the same PID with the same start time,
# so never a process that reused the number), so that each stops what it started itself, then
# SIGKILL to those still there after GRACE seconds (default 3); it removes the files. Prints how
# many it stopped.
set -uo pipefail
dir=${1:?usage: kill-test-children.sh DIR [GRACE]}
grace=${2:-3}
[[ -d "$dir" ]] || exit 0
# The start time of a PID (field 22 of /proc/PID/stat; the command name in parentheses may hold spaces).
start_time() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    read -ra fields <<<"$stat"
    echo "${fields[19]}"
}
alive() { [[ "$(start_time "$1")" == "$2" ]]; }
declare -A listed=()
for file in "$dir"/*; do
    [[ -f "$file" ]] || continue
    pid=${file##*/}
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    want=$(<"$file")
    alive "$pid" "$want" && listed[$pid]=$want
    rm -f "$file"
done
((${#listed[@]} > 0)) || exit 0
for pid in "${!listed[@]}"; do kill -TERM "$pid" 2>/dev/null; done
for ((tick = 0; tick < grace * 10; tick++)); do
    left=0
    for pid in "${!listed[@]}"; do alive "$pid" "${listed[$pid]}" && left=$((left + 1)); done
    ((left == 0)) && break
    sleep 0.1
done
for pid in "${!listed[@]}"; do alive "$pid" "${listed[$pid]}" && kill -KILL "$pid" 2>/dev/null; done
echo "kill-test-children: stopped ${#listed[@]} children the test process left running: ${!listed[*]}" >&2
