#!/usr/bin/env bash
# The Pi tier (`make pi-check`): boots Debian 13 arm64 (its own kernel, systemd as PID 1) in
# qemu-system-aarch64 -M virt under TCG, installs blebridge's arm64 .deb there from a local apt
# repository and runs the steps of Tests/Pi/guest/run.sh against real bluetoothd, btvirt
# controllers, BlueZ's example GATT peripheral and mosquitto. Prints every step with its result
# and time; exits non-zero when a step failed.
#
#   PI_CHECK_DEB=path/blebridge_X_arm64.deb   use this .deb (default: deploy/package --arch arm64)
#   PI_CHECK_CACHE=dir                        image cache and run directory (default .build/pi)
#   PI_CHECK_TIMEOUT=seconds                  VM time limit (default 3600)
#   PI_CHECK_CPU=cortex-a72                   QEMU CPU model (cortex-a72 is the Pi 4's)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${PI_CHECK_CACHE:-$root/.build/pi}
started=$(date +%s)
mkdir -p "$cache"

image_started=$(date +%s)
"$here/build-image.sh" "$cache"
"$here/build-vhci.sh" "$cache"
image_seconds=$(($(date +%s) - image_started))

deb=${PI_CHECK_DEB:-}
if [[ -z "$deb" ]]; then
    deb=$("$root/deploy/package" --arch arm64 | tail -n 1)
fi
run="$cache/run"
rm -rf "$run" && mkdir -p "$run/debs/old" "$run/debs/new" "$run/out"
cp -r "$here/guest" "$run/guest"
cp "$cache/hci_vhci.ko" "$run/hci_vhci.ko"
if [[ "$deb" == none ]]; then
    # Checks the image and the rig alone; every package step is reported as not run.
    printf 'OLD_DEB=\nNEW_DEB=\nOLD_VERSION=none\nNEW_VERSION=none\n' > "$run/debs/manifest"
else
[[ -f "$deb" ]] || { echo "pi-check: no .deb at '$deb'" >&2; exit 66; }
arch=$(dpkg-deb -f "$deb" Architecture)
[[ "$arch" == arm64 ]] || { echo "pi-check: $deb is for $arch, not arm64" >&2; exit 65; }
# The binary itself must be AArch64 (ELF e_machine 183), not an x86_64 build labelled arm64.
binary=$(mktemp)
dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/bin/blebridge > "$binary"
machine=$(od -An -tu2 -j18 -N2 "$binary" | tr -d ' ')
rm -f "$binary"
[[ "$machine" == 183 ]] || { echo "pi-check: usr/bin/blebridge in $deb is not an AArch64 ELF (e_machine $machine)" >&2; exit 65; }
# The second build: the same package with a higher version (an upgrade as apt sees it).
old_version=$(dpkg-deb -f "$deb" Version)
new_version="${old_version}+pi1"
cp "$deb" "$run/debs/old/"
unpacked=$(mktemp -d)
dpkg-deb -R "$deb" "$unpacked/pkg"
sed -i "s/^Version: .*/Version: $new_version/" "$unpacked/pkg/DEBIAN/control"
dpkg-deb --root-owner-group -Zgzip --build "$unpacked/pkg" "$run/debs/new/blebridge_${new_version}_arm64.deb" >/dev/null
rm -rf "$unpacked"
cat > "$run/debs/manifest" <<MANIFEST
OLD_DEB=old/$(basename "$deb")
NEW_DEB=new/blebridge_${new_version}_arm64.deb
OLD_VERSION=$old_version
NEW_VERSION=$new_version
MANIFEST
fi

# A throw-away overlay keeps the cached image clean for the next run.
qemu-img create -q -f qcow2 -b "$cache/rootfs.img" -F raw "$run/overlay.qcow2"
boot_started=$(date +%s)
echo "pi-check: booting $(cat "$cache/kernel-version") (arm64, TCG) with $(basename "$deb")" >&2
[[ "$deb" == none ]] && old_version=none
set +e
timeout "${PI_CHECK_TIMEOUT:-3600}" qemu-system-aarch64 \
    -M virt -cpu "${PI_CHECK_CPU:-cortex-a72}" -accel tcg,thread=multi -smp 2 -m 1024 \
    -nographic -no-reboot -nic none \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
    -append "root=/dev/vda rw console=ttyAMA0 pi-check=1 systemd.show_status=false" \
    -drive "file=$run/overlay.qcow2,if=none,id=root,format=qcow2" -device virtio-blk-pci,drive=root \
    -virtfs "local,path=$run,mount_tag=picheck,security_model=none" \
    > "$run/out/console.log" 2>&1
qemu_status=$?
set -e
vm_seconds=$(($(date +%s) - boot_started))
rm -f "$run/overlay.qcow2"
total=$(($(date +%s) - started))

status=$(cat "$run/out/status" 2>/dev/null || echo none)
boot=$(head -n 1 "$run/out/boot-time.txt" 2>/dev/null | sed 's/^Startup finished in //')
{
    echo "Pi tier: blebridge ${old_version:-none} arm64 on Debian 13 arm64, kernel $(cat "$cache/kernel-version"), qemu-system-aarch64 -cpu ${PI_CHECK_CPU:-cortex-a72} TCG"
    echo
    if [[ -s "$run/out/results.tsv" ]]; then
        awk -F'\t' '{printf "%-4s %7ss  %s\n        %s\n", $1, $3, $2, $4}' "$run/out/results.tsv"
    fi
    echo
    echo "image: $(grep -E '^(seconds|image_allocated_mb)' "$cache/image.info" | tr '\n' ' ') (this run: ${image_seconds}s)"
    echo "boot (systemd-analyze time): ${boot:-unknown}; VM ran ${vm_seconds}s; whole pi-check ${total}s"
    echo "guest status: $status (qemu exit $qemu_status); logs in $run/out"
} | tee "$run/out/summary.txt"
[[ "$status" == 0 ]] && ! grep -q '^FAIL' "$run/out/results.tsv"
