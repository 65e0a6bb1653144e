#!/usr/bin/env bash
# Boots the test VM (QEMU, software emulation) and runs one guest script inside it.
# Usage: Tests/VM/run-guest.sh GUEST_SCRIPT [OUTDIR]. Exits with the guest script's status.
# BLEBRIDGE_VM_DEBIAN=13 boots Debian 13 instead (trixie's kernel 6.12, its own root with bluez
# 5.82, made by prepare.sh in .build/vm-trixie); the checkout is then shared at its own path, and
# the binaries are BLEBRIDGE_BIN_DIR (default .build/swift-6.0.3/debug: built in the trixie
# toolchain chroot, docs/testing.md). BLEBRIDGE_BIN_DIR reaches the guest script either way.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$(readlink -f "$1")
outdir=${2:-$(mktemp -d)}
mkdir -p "$outdir"
rm -f "$outdir/status"
debian=${BLEBRIDGE_VM_DEBIAN:-12}
bin_dir=${BLEBRIDGE_BIN_DIR:-}
shares=()
if [[ $debian == 13 ]]; then
    vm="$root/.build/vm-trixie"
    guest_root="$vm/root"
    [[ -f "$vm/initramfs.gz" && -d "$guest_root" ]] || "$root/Tests/VM/prepare.sh"
    # -m: the directory need not exist yet (-f gave "" for a missing .build/swift-6.0.3, and the
    # script stopped there with status 1, saying nothing).
    bin_dir=$(readlink -m "${bin_dir:-$root/.build/swift-6.0.3/debug}")
    # A scenario without the gateway (discover-connect) runs without it.
    [[ -x "$bin_dir/blebridge" ]] || echo "vm: WARNING: no $bin_dir/blebridge built against trixie; build it with" \
        "deploy/toolchain/trixie-chroot.sh run swift build --scratch-path .build/swift-6.0.3" \
        "(docs/testing.md, \"Debian 13\"), or set BLEBRIDGE_BIN_DIR; a scenario that runs the gateway fails without it" >&2
    [[ "$bin_dir" == "$root"/* ]] || { echo "vm: BLEBRIDGE_BIN_DIR must be inside the checkout ($root): only the checkout is shared" >&2; exit 1; }
    # The checkout appears in the guest at its own path (a mount point made in the cached root).
    mkdir -p "$guest_root$root"
    shares+=(-virtfs "local,path=$root,mount_tag=checkout,security_model=none,readonly=on,multidevs=remap")
    extra="bb.checkout=$root"
else
    vm="$root/.build/vm"
    guest_root=/
    [[ -f "$vm/initramfs.gz" ]] || "$root/Tests/VM/prepare.sh"
    extra=""
fi
[[ -z "$bin_dir" ]] || extra+=" bb.bindir=$bin_dir"
# A scenario that needs longer than the default says so in a line `# vm-timeout: SECONDS`;
# BLEBRIDGE_VM_TIMEOUT, when set, overrides both.
own=$(sed -n 's/^# vm-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -1)
# no_timer_check: on a host at load average 36 the emulated guest's kernel found its IO-APIC timer
# too slow at boot and panicked ("IO-APIC + timer doesn't work!", 2026-12-02); the check is for real
# hardware and is skipped.
timeout "${BLEBRIDGE_VM_TIMEOUT:-${own:-420}}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 1024 -nographic -no-reboot \
    -kernel "$vm/vmlinuz" -initrd "$vm/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check bb.script=$script $extra" \
    -virtfs "local,path=$guest_root,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
    -virtfs "local,path=$outdir,mount_tag=outdir,security_model=none" \
    "${shares[@]}" \
    > "$outdir/console.log" 2>&1 || true
status=$(cat "$outdir/status" 2>/dev/null || echo 125)
if [[ "$status" != 0 ]]; then
    echo "vm: guest script $script exited $status; console:" >&2
    tail -n 200 "$outdir/console.log" >&2
fi
exit "$status"
