#!/usr/bin/env bash
# test-swift-6.0.sh [SWIFT-TESTING ARGS...]: builds the package and its tests with Debian 13's Swift
# 6.0.3 (the compiler of the arm64 release binary and of `apt install swiftlang` on trixie) and
# runs the test suite with it, in the trixie test chroot (deploy/toolchain/trixie-chroot.sh test).
#
# Why: Swift 6.0.3 miscompiled an actor's async initializer (docs/toolchains.md), and every binary
# it built crashed at start without bluetoothd. scripts/test.sh builds and tests with the host's
# Swift only, so only this finds a fault of 6.0.3's.
#
# Left out, and covered by scripts/test.sh: the real-BlueZ VM tier, `swift format` (6.0.3 has no
# `swift format` subcommand), the tests that need the Python venvs of scripts/setup.sh (made for
# the host's Python, not the chroot's: bleak against the simulator, the differential decoder suite
# and the Home Assistant template tests), and two tests of Debian 12's versions (below). Extra arguments go to the test binary (e.g.
# `--filter CentralSimulatorTests`).
#
# Needs root (the chroot) and, the first time, mmdebstrap and the network to Debian's mirror.
# Environment: BLEBRIDGE_TOOLCHAIN_DIR (where the trees live), SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
# (default 4, as scripts/test.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
chroot=deploy/toolchain/trixie-chroot.sh
scratch=.build/trixie-amd64
width=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}
"$chroot" test swift build --build-tests --scratch-path "$scratch"
# The children the tests start are listed here (Tests/TestSupport/ChildProcess.swift) and stopped
# on the way out if the test process leaves any (the chroot shares the host's PIDs and /proc).
children=.build/test-swift-6.0-children
rm -rf "$children"
mkdir -p "$children"
chown "$(stat -c %u:%g "$root")" "$children"
log=$(mktemp)
trap 'rm -f "$log"; scripts/kill-test-children.sh "$children"; rm -rf "$children"' EXIT
skipped=(
    # Debian 13's libmosquitto 2.0.21 treats the broker's PUBACK 0x95 as a protocol error and
    # resends the message on each reconnect (docs/deploy.md, "Packet size"); the test would fail
    # at its time limit. Debian 12's 2.0.11, which scripts/test.sh uses, passes it.
    payloadOverTheBrokerLimitIsRefusedWithPayloadTooLarge
    bleakScansConnectsReadsWritesAndReceivesNotifications
    bleakRunsTheBuiltInScenarios
    decodersAgreeWithTheReferenceParsers
    HomeAssistantControlTests
    mibeaconButtonsBecomeHomeAssistantEvents
    # bluetoothctl 5.82 (Debian 13) prints "Disconnection successful" where the 5.66 transcript
    # this test compares with says "Successful disconnected".
    bluetoothctlPrintsWhatItPrintsAgainstBluetoothd
)
skip_args=()
for test in "${skipped[@]}"; do skip_args+=(--skip "$test"); done
# Swift Testing 6.0.3 ignores SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH: one process started
# 1,095 of the 1,225 tests before the first ended, and the simulators' replies then waited behind
# everyone's work (19 failures, as scripts/test.sh saw before it set a width). So each test module
# runs in a process of its own with --no-parallel, and $width such processes run at once. (A
# module whose tests were all skipped would exit 69, "no tests": skip tests, not whole modules.)
# Reversed: the long modules (EndToEndTests, GatewayTests) are declared last and start first.
modules=$(grep -A1 '\.testTarget(' Package.swift | grep -o 'name: "[A-Za-z]*"' | cut -d'"' -f2 | tac)
# EndToEndTests alone took 688–948 s of a whole run (docs/toolchains.md): its suites (the structs its files
# declare, dealt round-robin) run as $e2e_shards processes of their own, before every module.
e2e_shards=${BLEBRIDGE_E2E_SHARDS:-3}
mapfile -t e2e_suites < <(grep -hoE '\bstruct [A-Za-z0-9]+' Tests/EndToEndTests/*.swift | awk '{print $2}' | sort -u)
filters=()
for ((shard = 0; shard < e2e_shards; shard++)); do
    names=()
    for ((index = shard; index < ${#e2e_suites[@]}; index += e2e_shards)); do names+=("${e2e_suites[index]}"); done
    filters+=("^EndToEndTests\\.($(IFS='|'; echo "${names[*]}"))/")
done
for module in $modules; do
    [[ $module == EndToEndTests ]] || filters+=("^$module\\.")
done
# One chroot (trixie-chroot.sh runs one command per tree at a time); xargs runs the filters in it,
# one per line (-d: a filter's backslashes and bars are not xargs quoting).
each_filter='printf "%s\n" "$FILTERS" | xargs -d "\n" -P "$WIDTH" -I{} "$XCTEST" --testing-library swift-testing --no-parallel --filter "{}" "$@"'
status=0
"$chroot" test env BLEBRIDGE_TEST_CHILDREN="/src/$children" FILTERS="$(printf '%s\n' "${filters[@]}")" WIDTH="$width" \
    XCTEST="$scratch/debug/BLEBridgePackageTests.xctest" bash -c "$each_filter" bash "${skip_args[@]}" "$@" 2>&1 |
    tee "$log" || status=$?
if ((status == 0)); then
    exit 0
fi
"$root/scripts/report-failed-tests.sh" test-swift-6.0 "$log"
