# Sourced by guest scripts: starts a system bus, two virtual LE controllers (btvirt) and
# bluetoothd 5.66, in that order, and waits until both controllers are powered on in BlueZ.
# Helpers: start_btvirt, stop_btvirt (the controllers removed and added back), bluez_has_both.
# Facts behind the order and the retry: Tests/VM/README (docs/testing.md).
set -u
export SYSTEMD_PAGER=cat PAGER=cat SYSTEMD_COLORS=0
mkdir -p /run/dbus /var/lib/bluetooth
# The logs live on the guest's tmpfs and are copied to the output directory when the script
# exits (on_exit, below): a debug log written line by line over 9p slowed bluetoothd's start on a
# busy host.
copy_logs() { cp /tmp/bluetoothd.log /tmp/btvirt.log /tmp/hci.btsnoop /tmp/out/ 2>/dev/null; }
# A scenario that failed (status 1) while bluetoothd or a kernel worker has been blocked in the
# kernel for 10 s failed because the guest kernel's Bluetooth core hung, not because of the gateway:
# the kernel's hung-task report (what the watchdog waits for) comes 60-120 s after the hang, later
# than a scenario's own 60 s waits. Seen twice in scenario-bluez-late under a loaded host
# (2026-12-05, 2026-12-06): bluetoothd's log stopped at "sending set local name command for index
# 1" and the gateway rightly said `bluez_not_responding`. Such a failure ends with 126 after the
# stacks are recorded, which run-tier.sh retries once, as the watchdog's.
on_exit() {
    status=$?
    if [ "$status" = 1 ] && bluez_blocked_for_10s; then
        echo "guest: bluetoothd or the controller's kernel worker has been blocked in the kernel for 10 s: the guest kernel's Bluetooth core hung; recording the stacks"
        record_hang
        copy_logs
        exit 126
    fi
    copy_logs
}
trap on_exit EXIT
dbus-daemon --system --fork --nopidfile || { echo "guest: dbus-daemon failed"; exit 20; }
# Every HCI packet of both controllers, for a scenario that fails (`btmon -r hci.btsnoop` reads it):
# the kernel's side of a connect that never completes is not in bluetoothd's log.
btmon -w /tmp/hci.btsnoop >/dev/null 2>&1 &

# btmgmt 5.82 (Debian 13) never runs its command when its standard input is /dev/null, as in every
# background job of a script (measured in the guest: `btmgmt --index 1 rm-adv 1 </dev/null` and the
# same in a background loop timed out after 10 s without doing anything; with the console as input
# it answered in 3 s); 5.66 does not care. Every btmgmt of the guest scripts gets the console.
btmgmt() { command btmgmt "$@" </dev/console; }

# The guest kernel's Bluetooth core has deadlocked (hung tasks: bluetoothd and a kworker of the
# controller's workqueue) or oopsed ("kernel BUG at"). Its hung-task detector reports after
# HUNG_AFTER seconds (120 by default, which cost a scenario its whole time limit); the watchdog then
# records every blocked task's stack (sysrq w), the kernel log and BlueZ's logs in the output directory (dmesg-hung.txt,
# stacks-hung.txt), and ends the guest with status 126, which run-tier.sh retries once.
HUNG_AFTER=${HUNG_AFTER:-60}
echo "$HUNG_AFTER" >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
# Every blocked task's stack (sysrq w, /proc/PID/stack), the kernel log and the process list.
record_hang() {
    echo w >/proc/sysrq-trigger
    sleep 1
    for task in /proc/[0-9]*; do
        grep -q '^State:.*D (disk sleep)' "$task/status" 2>/dev/null || continue
        echo "== $(cat "$task/comm") ${task#/proc/}"
        cat "$task/stack"
    done >/tmp/out/stacks-hung.txt 2>&1
    dmesg >/tmp/out/dmesg-hung.txt
    ps -eo pid,stat,wchan:32,args >/tmp/out/ps-hung.txt 2>&1
}
hung_watchdog() {
    while sleep 5; do
        # A hung task, or the 6.1 kernel's Bluetooth core oopsing (a `list_del corruption` BUG in
        # hci_chan_del under bluetoothd's l2cap_sock_release after a controller re-add, 2026-12-02):
        # either way bluetoothd is gone or stuck and the scenario cannot go on.
        dmesg | grep -q 'blocked for more than\|kernel BUG at' || continue
        echo "guest: the kernel reports hung tasks or a BUG; recording the stacks"
        record_hang
        copy_logs
        echo 126 >/tmp/out/status
        sync
        echo o >/proc/sysrq-trigger
    done
}
hung_watchdog &

# The pids of bluetoothd and the kernel workers in uninterruptible sleep ("D") now.
blocked_bluez_tasks() {
    for task in /proc/[0-9]*; do
        case "$(cat "$task/comm" 2>/dev/null)" in bluetoothd | kworker*) ;; *) continue ;; esac
        grep -q '^State:.*D (disk sleep)' "$task/status" 2>/dev/null && echo "${task#/proc/}"
    done
}
# Whether one of them stays blocked through 10 s of samples (every 0.5 s): the kernel's Bluetooth
# core hung, bluetoothd (or the controller's worker) waiting on it for good.
bluez_blocked_for_10s() {
    still=$(blocked_bluez_tasks)
    for _ in $(seq 1 20); do
        [ -n "$still" ] || return 1
        sleep 0.5
        now_blocked=$(blocked_bluez_tasks)
        still=$(for pid in $still; do echo "$now_blocked" | grep -qx "$pid" && echo "$pid"; done)
    done
    [ -n "$still" ]
}

controllers_ready() {
    # both controllers registered with a non-zero address
    local count=0 address
    for hci in /sys/class/bluetooth/hci0 /sys/class/bluetooth/hci1; do
        [ -e "$hci" ] || return 1
        address=$(btmgmt --index "${hci##*/hci}" info 2>/dev/null | awk '/addr / {print $2; exit}')
        [ -n "$address" ] && [ "$address" != "00:00:00:00:00:00" ] && count=$((count + 1))
    done
    [ "$count" = 2 ]
}

# start_btvirt: starts btvirt (both controllers) and waits until the kernel has both with an address;
# up to three tries (a busy guest can miss the kernel's 2 s reset timeout). Fails when they never came up.
start_btvirt() {
    local attempt
    for attempt in 1 2 3; do
        btvirt -L -l2 >>/tmp/btvirt.log 2>&1 &
        BTVIRT_PID=$!
        for _ in $(seq 1 50); do controllers_ready && break; sleep 0.2; done
        controllers_ready && return 0
        echo "guest: controllers not ready (attempt $attempt), restarting btvirt"
        kill "$BTVIRT_PID" 2>/dev/null; wait "$BTVIRT_PID" 2>/dev/null
        sleep 1
    done
    return 1
}

# stop_btvirt: kills btvirt; both controllers leave the kernel (and BlueZ) with it.
stop_btvirt() {
    kill "$BTVIRT_PID"; wait "$BTVIRT_PID" 2>/dev/null
    for _ in $(seq 1 100); do [ -e /sys/class/bluetooth/hci0 ] || [ -e /sys/class/bluetooth/hci1 ] || return 0; sleep 0.1; done
    echo "guest: the controllers are still there after btvirt exited"; exit 1
}

# bluez_has_both: waits up to 30 s (on a busy host bluetoothd took over 10 s) until bluetoothd lists both controllers.
bluez_has_both() {
    for _ in $(seq 1 150); do
        [ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" = 2 ] && return 0
        sleep 0.2
    done
    [ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" = 2 ]
}

start_btvirt || { echo "guest: btvirt controllers never came up"; exit 21; }

# Debug log, kept in the scenario's output directory (.build/vm/out/NAME/bluetoothd.log).
/usr/libexec/bluetooth/bluetoothd -n -d >/tmp/bluetoothd.log 2>&1 &
BLUETOOTHD_PID=$!
bluez_has_both || { echo "guest: bluetoothd does not see 2 controllers"; tail -50 /tmp/bluetoothd.log; exit 22; }
for index in 0 1; do btmgmt --index $index power on >/dev/null 2>&1; done
echo "guest: bluez up: $(bluetoothctl list | tr '\n' ' ')"
