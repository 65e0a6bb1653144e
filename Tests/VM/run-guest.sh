#!/usr/bin/env bash
# Boots the test VM (QEMU, software emulation) and runs one guest script inside it.
# Usage: Tests/VM/run-guest.sh GUEST_SCRIPT [OUTDIR]. Exits with the guest script's status.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
vm="$root/.build/vm"
script=$(readlink -f "$1")
outdir=${2:-$(mktemp -d)}
mkdir -p "$outdir"
rm -f "$outdir/status"
[[ -f "$vm/initramfs.gz" ]] || "$root/Tests/VM/prepare.sh"
# A scenario that needs longer than the default says so in a line `# vm-timeout: SECONDS`;
# BLEBRIDGE_VM_TIMEOUT, when set, overrides both.
own=$(sed -n 's/^# vm-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -1)
# no_timer_check: on a host at load average 36 the emulated guest's kernel found its IO-APIC timer
# too slow at boot and panicked ("IO-APIC + timer doesn't work!", 2026-12-02); the check is for real
# hardware and is skipped.
timeout "${BLEBRIDGE_VM_TIMEOUT:-${own:-420}}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 1024 -nographic -no-reboot \
    -kernel "$vm/vmlinuz" -initrd "$vm/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check bb.script=$script" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$outdir,mount_tag=outdir,security_model=none" \
    > "$outdir/console.log" 2>&1 || true
status=$(cat "$outdir/status" 2>/dev/null || echo 125)
if [[ "$status" != 0 ]]; then
    echo "vm: guest script $script exited $status; console:" >&2
    tail -n 200 "$outdir/console.log" >&2
fi
exit "$status"
