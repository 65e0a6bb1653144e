#!/usr/bin/env bash
# Prepares the real-BlueZ VM tier: Debian's kernel (extracted, not installed), a busybox
# initramfs that mounts the guest's root over 9p, and the host packages the guest uses (qemu,
# bluez, btvirt). Idempotent.
#   Default (Debian 12): the host's kernel package, the host's root is the guest's; in .build/vm.
#   BLEBRIDGE_VM_DEBIAN=13 (opt-in): a Debian 13 (trixie) amd64 guest root made by mmdebstrap
#   (bluez 5.82, the packages below, libswiftlang for the Swift runtime of a binary built in the
#   trixie toolchain chroot) and trixie's own kernel (linux-image-amd64, 6.12); in .build/vm-trixie.
#   The root is made once and reused while its recipe is unchanged (deploy/toolchain/debian-tree.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
debian=${BLEBRIDGE_VM_DEBIAN:-12}
case "$debian" in
    12) out="$root/.build/vm" ;;
    13) out="$root/.build/vm-trixie" ;;
    *) echo "BLEBRIDGE_VM_DEBIAN must be 12 or 13, not $debian" >&2; exit 64 ;;
esac
mkdir -p "$out"

# bluez-test-scripts: BlueZ's example GATT server and advertisement (python3-dbus, python3-gi), the
# peripheral of the reference capture and of the lifecycle scenarios.
need=(qemu-system-x86 bluez bluez-test-tools bluez-test-scripts python3-dbus python3-gi busybox-static cpio kmod jq)
[[ $debian == 12 ]] || need+=(mmdebstrap)
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

# extract_kernel DEB: unpacks the kernel image package DEB into $out/kernel (never installed).
extract_kernel() {
    rm -rf "$out/kernel" && mkdir -p "$out/kernel"
    dpkg-deb -x "$1" "$out/kernel/root"
    # Debian 13's package puts the modules in /usr/lib/modules (merged /usr); depmod -b and the
    # initramfs below read lib/modules.
    [[ -e "$out/kernel/root/lib" ]] || ln -s usr/lib "$out/kernel/root/lib"
    local version
    version=$(ls "$out/kernel/root/lib/modules")
    depmod -b "$out/kernel/root" "$version"
    cp "$out/kernel/root/boot/vmlinuz-$version" "$out/vmlinuz"
    echo "$version" > "$out/kernel-version"
    basename "$1" > "$out/kernel-deb"
}

if [[ $debian == 12 && ! -f "$out/vmlinuz" ]]; then
    # The newest Debian 12 kernel image package, downloaded and unpacked (never installed on the host).
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    if [[ -z "$pkg" && $(id -u) -eq 0 ]]; then
        apt-get update -qq
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    fi
    [[ -n "$pkg" ]] || { echo "cannot find the kernel package behind linux-image-amd64 (run apt-get update)" >&2; exit 1; }
    download=$(mktemp -d)
    (cd "$download" && apt-get download -qq "$pkg" 2>/dev/null)
    extract_kernel "$download"/*.deb
    rm -rf "$download"
fi
if [[ $debian == 13 ]]; then
    # shellcheck source=../../deploy/toolchain/debian-tree.sh
    . "$root/deploy/toolchain/debian-tree.sh"
    # What the guest scripts use, and the run-time libraries of blebridge built against trixie.
    packages=bluez,bluez-test-tools,bluez-test-scripts,python3-dbus,python3-gi,mosquitto,mosquitto-clients
    packages+=,jq,dbus,systemd,procps,kmod,coreutils,util-linux,mawk,iproute2
    packages+=,libswiftlang,libdbus-1-3,libmosquitto1,libsqlite3-0,libssl3t64
    # trixie's kernel image package (the one linux-image-amd64 points at) is downloaded into the
    # root's /opt/vm-kernel, not installed (no initramfs-tools run).
    kernel_hook='mkdir -p "$1/opt/vm-kernel" && chroot "$1" sh -c "cd /opt/vm-kernel && apt-get -q -o APT::Sandbox::User=root download \$(apt-cache depends linux-image-amd64 | grep -o \"linux-image-[0-9][^ ]*\" | head -1)"'
    guest_root=$(debian_tree "$out/root" trixie amd64 apt "$packages" --customize-hook="$kernel_hook")
    deb=$(ls "$guest_root"/opt/vm-kernel/linux-image-*.deb | head -1)
    [[ -n "$deb" ]] || { echo "vm: no kernel package in $guest_root/opt/vm-kernel" >&2; exit 1; }
    if [[ ! -f "$out/vmlinuz" || "$(cat "$out/kernel-deb" 2>/dev/null)" != "$(basename "$deb")" ]]; then
        extract_kernel "$deb"
    fi
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
    if [[ -z "$self" ]]; then
        # built into this kernel: nothing to load
        grep -q "/$module.ko" "$moddir/modules.builtin" && continue
        echo "vm: kernel $version has no module $module" >&2
        exit 1
    fi
    [[ " ${order[*]} " == *" $self "* ]] || order+=("$self")
done
: > "$initrd/lib/modules/order"
for rel in "${order[@]}"; do
    # Debian 13's modules are xz-compressed; busybox's insmod gets them uncompressed.
    name=$(basename "$rel")
    case "$name" in
        *.ko.xz) xz -dc "$moddir/$rel" > "$initrd/lib/modules/${name%.xz}"; name=${name%.xz} ;;
        *.ko.zst) zstd -qdc "$moddir/$rel" > "$initrd/lib/modules/${name%.zst}"; name=${name%.zst} ;;
        *) cp "$moddir/$rel" "$initrd/lib/modules/" ;;
    esac
    echo "$name" >> "$initrd/lib/modules/order"
done
cp "$root/Tests/VM/init" "$initrd/init"
chmod +x "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet | gzip -1 > "$out/initramfs.gz")
echo "vm: Debian $debian, kernel $version, initramfs with ${#order[@]} modules in $out" >&2
