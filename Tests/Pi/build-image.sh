#!/usr/bin/env bash
# Builds the Pi-tier image: Debian 13 (trixie) arm64 made by mmdebstrap with systemd as PID 1,
# Debian's own arm64 kernel and initramfs, bluez, btvirt, BlueZ's example GATT scripts, mosquitto,
# and a local apt repository (/srv/pi-check-repo) holding blebridge's run-time dependencies.
# Maintainer scripts of the foreign architecture run under qemu-user-static through binfmt_misc.
#
#   Tests/Pi/build-image.sh [CACHE_DIR]      (default: $PI_CHECK_CACHE or .build/pi)
#
# Idempotent: the image is rebuilt only when image-packages, repo-packages, this script or the
# files under image/ change (their hash is the cache key). Needs root (chroot, mke2fs -d owners).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${1:-${PI_CHECK_CACHE:-$root/.build/pi}}
mirror=${PI_CHECK_MIRROR:-http://deb.debian.org/debian}
suite=trixie
mkdir -p "$cache"

key=$(cat "$here/build-image.sh" "$here/image-packages" "$here/repo-packages" "$here"/image/* | sha256sum | cut -c1-16)
if [[ -f "$cache/image.key" && $(cat "$cache/image.key") == "$key" && -f "$cache/rootfs.img" ]]; then
    echo "pi: image $key is cached in $cache" >&2
    exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "pi: building the image needs root (chroot, file owners in the ext4 image)" >&2; exit 77; }

need=(mmdebstrap qemu-user-static qemu-system-arm qemu-utils binfmt-support e2fsprogs dpkg-dev)
missing=()
for package in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# binfmt_misc: mounted and qemu-aarch64 registered (containers often start with neither).
[[ -e /proc/sys/fs/binfmt_misc/status ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64
grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 || { echo "pi: binfmt_misc has no working qemu-aarch64 entry" >&2; exit 1; }

started=$(date +%s)
work="$cache/work"
rm -rf "$work" && mkdir -p "$work"
packages=$(grep -v '^#' "$here/image-packages" | xargs | tr ' ' ',')
repo_packages=$(grep -v '^#' "$here/repo-packages" | xargs)

# The customize hooks run on the host with the chroot as $1; apt inside still reaches the mirror.
mmdebstrap --arch=arm64 --variant=minbase --include="$packages" \
    --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" && echo COMPRESS=gzip > "$1/etc/initramfs-tools/conf.d/pi-check.conf"' \
    --customize-hook='mkdir -p "$1/srv/pi-check-repo"' \
    --customize-hook="chroot \"\$1\" sh -c 'cd /srv/pi-check-repo && apt-get -q -o APT::Sandbox::User=root download \$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances $repo_packages | grep -v \"^ \" | grep -v \"^<\" | sort -u)'" \
    --customize-hook='cd "$1/srv/pi-check-repo" && dpkg-scanpackages --multiversion . /dev/null > Packages 2>/dev/null' \
    --customize-hook='rm -f "$1/etc/apt/sources.list" "$1"/etc/apt/sources.list.d/*' \
    --customize-hook='printf "Types: deb\nURIs: file:/srv/pi-check-repo\nSuites: ./\nTrusted: yes\n" > "$1/etc/apt/sources.list.d/pi-check-local.sources"' \
    --customize-hook='chroot "$1" apt-get -q update' \
    --customize-hook='chroot "$1" apt-get clean' \
    --customize-hook='echo pi-check > "$1/etc/hostname"; printf "127.0.0.1 localhost\n127.0.1.1 pi-check\n" > "$1/etc/hosts"' \
    --customize-hook='printf "/dev/vda / ext4 rw,noatime,errors=remount-ro 0 1\n" > "$1/etc/fstab"' \
    --customize-hook="install -m 0755 '$here/image/pi-check-guest' \"\$1/usr/local/sbin/pi-check-guest\"" \
    --customize-hook="install -m 0644 '$here/image/pi-check.service' \"\$1/etc/systemd/system/pi-check.service\"" \
    --customize-hook='chroot "$1" systemctl enable pi-check.service' \
    --customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer dpkg-db-backup.timer 2>/dev/null || true' \
    --customize-hook='chroot "$1" passwd -d root' \
    --customize-hook='ln -sf /dev/null "$1/etc/systemd/system/serial-getty@ttyAMA0.service"' \
    "$suite" "$work/root" "$mirror"

version=$(ls "$work/root/lib/modules" | head -1)
cp "$work/root/boot/vmlinuz-$version" "$work/vmlinuz"
cp "$work/root/boot/initrd.img-$version" "$work/initrd.img"
echo "$version" > "$work/kernel-version"
used=$(du -sm "$work/root" | cut -f1)
# Room for the test's installs and journals; the file is sparse, so only what is used costs disk.
size=$((used + 1024))
mke2fs -q -t ext4 -L pi-root -d "$work/root" "$work/rootfs.img" "${size}M"
rm -rf "$work/root"
mv "$work/vmlinuz" "$work/initrd.img" "$work/kernel-version" "$cache/"
mv "$work/rootfs.img" "$cache/rootfs.img"
rmdir "$work" 2>/dev/null || true
echo "$key" > "$cache/image.key"
elapsed=$(($(date +%s) - started))
printf 'built %s\nseconds %s\nrootfs_used_mb %s\nimage_size_mb %s\nimage_allocated_mb %s\nkernel %s\n' \
    "$(date -u +%FT%TZ)" "$elapsed" "$used" "$size" "$(du -m "$cache/rootfs.img" | cut -f1)" "$version" > "$cache/image.info"
echo "pi: image built in ${elapsed}s: $(tr '\n' ' ' < "$cache/image.info")" >&2
