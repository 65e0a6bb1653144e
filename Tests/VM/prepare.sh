#!/usr/bin/env bash
# Prepares the real-BlueZ VM tier: Debian's kernel (extracted, not installed), a busybox
# initramfs that mounts the host's root read-only over 9p, and the host packages the guest
# uses (qemu, bluez, btvirt). Idempotent; everything lands in .build/vm.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/.build/vm"
mkdir -p "$out"

# bluez-test-scripts: BlueZ's example GATT server and advertisement (python3-dbus, python3-gi), the
# peripheral of the reference capture and of the lifecycle scenarios.
need=(qemu-system-x86 bluez bluez-test-tools bluez-test-scripts python3-dbus python3-gi busybox-static cpio kmod jq)
missing=()
for package in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "The VM tier needs: ${missing[*]} (sudo apt-get install -y ${missing[*]})" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f "$out/vmlinuz" ]]; then
    # The newest Debian 12 kernel image package, downloaded and unpacked (never installed on the host).
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    if [[ -z "$pkg" && $(id -u) -eq 0 ]]; then
        apt-get update -qq
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    fi
    [[ -n "$pkg" ]] || { echo "cannot find the kernel package behind linux-image-amd64 (run apt-get update)" >&2; exit 1; }
    rm -rf "$out/kernel" && mkdir -p "$out/kernel"
    (cd "$out/kernel" && apt-get download -qq "$pkg" 2>/dev/null && dpkg-deb -x ./*.deb root)
    version=$(ls "$out/kernel/root/lib/modules")
    depmod -b "$out/kernel/root" "$version"
    cp "$out/kernel/root/boot/vmlinuz-$version" "$out/vmlinuz"
    echo "$version" > "$out/kernel-version"
fi
version=$(cat "$out/kernel-version")
moddir="$out/kernel/root/lib/modules/$version"

# The initramfs: busybox, the modules the guest needs (in dependency order), and /init.
initrd="$out/initramfs"
rm -rf "$initrd" && mkdir -p "$initrd"/{bin,proc,sys,dev,newroot,mnt,lib/modules}
cp /bin/busybox "$initrd/bin/busybox"
wanted=(virtio_pci 9pnet_virtio 9p overlay ansi_cprng hci_vhci cmac ecb algif_hash algif_skcipher)
order=()
add() {
    local rel
    for rel in $(awk -v m="$1" -F: '{n=$1; sub(/.*\//,"",n); sub(/\.ko.*/,"",n)} n==m {print $2; print $1}' "$moddir/modules.dep"); do
        [[ " ${order[*]} " == *" $rel "* ]] || order+=("$rel")
    done
}
for module in "${wanted[@]}"; do
    # dependencies first (modules.dep lists them after the colon, deepest last)
    deps=$(awk -v m="$module" -F: '{n=$1; sub(/.*\//,"",n); sub(/\.ko.*/,"",n)} n==m {print $2}' "$moddir/modules.dep")
    for dep in $(echo "$deps" | tr ' ' '\n' | tac); do
        [[ " ${order[*]} " == *" $dep "* ]] || order+=("$dep")
    done
    self=$(awk -v m="$module" -F: '{n=$1; sub(/.*\//,"",n); sub(/\.ko.*/,"",n)} n==m {print $1}' "$moddir/modules.dep")
    [[ " ${order[*]} " == *" $self "* ]] || order+=("$self")
done
: > "$initrd/lib/modules/order"
for rel in "${order[@]}"; do
    cp "$moddir/$rel" "$initrd/lib/modules/"
    basename "$rel" >> "$initrd/lib/modules/order"
done
cp "$root/Tests/VM/init" "$initrd/init"
chmod +x "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet | gzip -1 > "$out/initramfs.gz")
echo "vm: kernel $version, initramfs with ${#order[@]} modules in $out" >&2
