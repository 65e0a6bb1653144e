#!/usr/bin/env bash
# Builds hci_vhci.ko, the kernel's virtual HCI driver that btvirt needs (/dev/vhci), for the
# Pi-tier image's own kernel. Debian 13's arm64 kernel is built without it (CONFIG_BT_HCIVHCI is
# not set there; amd64's has it), while everything else the tier needs (bluetooth, hci_uart) is
# in the image. The module is compiled out of tree from Debian's own packages only, in a
# throw-away arm64 chroot under qemu-user: linux-headers-<kernel> (same build, same vermagic) and
# drivers/bluetooth/hci_vhci.c from linux-source-<series>. The module is not signed; the kernel
# loads it (CONFIG_MODULE_SIG_FORCE is not set) and marks itself tainted, which the tier reports.
#
#   Tests/Pi/build-vhci.sh [CACHE_DIR]      (default: $PI_CHECK_CACHE or .build/pi)
#
# Needs $CACHE_DIR/kernel-version (written by build-image.sh). Writes $CACHE_DIR/hci_vhci.ko and
# $CACHE_DIR/hci_vhci.info; does nothing when the module for that kernel is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${PI_CHECK_CACHE:-$root/.build/pi}}
mirror=${PI_CHECK_MIRROR:-http://deb.debian.org/debian}
kernel=$(cat "$cache/kernel-version")
if [[ -f "$cache/hci_vhci.ko" && -f "$cache/hci_vhci.info" ]] && grep -qx "kernel $kernel" "$cache/hci_vhci.info"; then
    echo "pi: hci_vhci.ko for $kernel is cached in $cache" >&2
    exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "pi: building hci_vhci.ko needs root (an arm64 chroot)" >&2; exit 77; }
# 6.12.117+deb13-arm64 -> linux-source-6.12
series=$(echo "$kernel" | cut -d. -f1,2)
started=$(date +%s)
work="$cache/vhci-work"
rm -rf "$work" && mkdir -p "$work"
cat > "$work/Kbuild" <<'KBUILD'
obj-m := hci_vhci.o
KBUILD
# The hooks run on the host with the chroot as $1.
# linux-headers depends on the linux-image it belongs to, whose postinst would build an initramfs
# under qemu-user (20 min of the first run's 40): update-initramfs is diverted to true for this
# chroot, and documentation is not unpacked.
mmdebstrap --arch=arm64 --variant=apt \
    --include="make,gcc,libc6-dev,xz-utils,linux-headers-$kernel" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs && ln -s /bin/true "$1/usr/sbin/update-initramfs"' \
    --customize-hook="chroot \"\$1\" sh -c 'cd /tmp && apt-get -q -o APT::Sandbox::User=root download linux-source-$series'" \
    --customize-hook="mkdir -p \"\$1/tmp/vhci\" && cp '$work/Kbuild' \"\$1/tmp/vhci/\"" \
    --customize-hook="dpkg-deb --fsys-tarfile \"\$1\"/tmp/linux-source-*.deb | tar -xOf - ./usr/src/linux-source-$series.tar.xz | tar -xJf - --strip-components=3 -C \"\$1/tmp/vhci\" linux-source-$series/drivers/bluetooth/hci_vhci.c" \
    --customize-hook="chroot \"\$1\" make -C /usr/src/linux-headers-$kernel M=/tmp/vhci modules" \
    --customize-hook="cp \"\$1/tmp/vhci/hci_vhci.ko\" '$work/hci_vhci.ko'" \
    --customize-hook="dpkg-deb -f \"\$1\"/tmp/linux-source-*.deb Version > '$work/source-version'" \
    --customize-hook="chroot \"\$1\" dpkg-query -W -f='\${Version}' linux-headers-$kernel > '$work/headers-version'" \
    trixie "$work/root" "$mirror"
rm -rf "$work/root"
modinfo -F vermagic "$work/hci_vhci.ko" | grep -q "^${kernel} " ||
    { echo "pi: hci_vhci.ko was built for '$(modinfo -F vermagic "$work/hci_vhci.ko")', not $kernel" >&2; exit 1; }
mv "$work/hci_vhci.ko" "$cache/hci_vhci.ko"
printf 'kernel %s\nheaders %s\nsource linux-source-%s %s\nseconds %s\n' "$kernel" "$(cat "$work/headers-version")" \
    "$series" "$(cat "$work/source-version")" "$(($(date +%s) - started))" > "$cache/hci_vhci.info"
rm -rf "$work"
echo "pi: hci_vhci.ko built: $(tr '\n' ' ' < "$cache/hci_vhci.info")" >&2
