#!/usr/bin/env bash
# Makes the Debian 13 (trixie) trees that give this project a version-matched Swift 6.0.3 toolchain
# (Debian's `swiftlang` package) on any x86_64 Debian host, without touching the host's apt sources.
#
#   deploy/toolchain/trixie-chroot.sh build      # the amd64 build chroot (prints its path)
#   deploy/toolchain/trixie-chroot.sh sysroot    # the arm64 sysroot for cross-compiling (prints its path)
#   deploy/toolchain/trixie-chroot.sh run CMD... # runs CMD in the build chroot, in the checkout
#   deploy/toolchain/trixie-chroot.sh test CMD...# runs CMD in the test chroot (the build chroot's
#                                                # packages plus the daemons and tools the tests use)
#
# The build chroot is an amd64 trixie tree with swiftlang, the -dev libraries the package links and
# the arm64 binutils (for strip). The sysroot is an arm64 trixie tree, only unpacked (mmdebstrap
# --variant=extract), with swiftlang:arm64 (its Swift runtime, static libraries and module files),
# libc6-dev, libstdc++ and libgcc, and the arm64 -dev libraries. Both are made once by mmdebstrap
# from the Debian mirror and reused; delete a tree to make it again.
#
# Environment:
#   BLEBRIDGE_TOOLCHAIN_DIR  where the trees live (default: <checkout>/.build/toolchain)
#   BLEBRIDGE_DEBIAN_MIRROR  the Debian mirror (default: http://deb.debian.org/debian)
# Needs root (mmdebstrap, chroot, mount) and mmdebstrap (apt-get install mmdebstrap).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${BLEBRIDGE_TOOLCHAIN_DIR:-$root/.build/toolchain}
# shellcheck source=debian-tree.sh
. "$root/deploy/toolchain/debian-tree.sh"
suite=trixie
dev_libs=libdbus-1-dev,libmosquitto-dev,libsqlite3-dev,libssl-dev
build_packages=swiftlang,$dev_libs,libstdc++-14-dev,pkg-config,binutils-aarch64-linux-gnu,file
sysroot_packages=swiftlang,$dev_libs,libc6-dev,libstdc++-14-dev,libgcc-14-dev
# What the test suite starts or calls besides the build (scripts/setup.sh's demo and test packages,
# less the Python venvs, which the suite built with 6.0.3 does not use: scripts/test-swift-6.0.sh).
test_packages=dpkg-dev,dbus-daemon,dbus-bin,mosquitto,mosquitto-clients,openssl,systemd,bluez,procps,python3,python3-dbus,python3-gi,python3-jsonschema

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }
die() { echo "trixie-chroot: $*" >&2; exit "${2:-1}"; }

# make_tree NAME ARCH VARIANT PACKAGES: makes $cache/NAME unless it is there with the same recipe.
make_tree() { debian_tree "$cache/$1" "$suite" "$2" "$3" "$4"; }

build_tree() { make_tree "trixie-amd64" amd64 apt "$build_packages"; }
sysroot_tree() { make_tree "trixie-arm64-sysroot" arm64 extract "$sysroot_packages"; }
test_tree() { make_tree "trixie-amd64-test" amd64 apt "$build_packages,$test_packages"; }

# run_in TREE CMD...: runs CMD as root in TREE with /proc, /dev and the checkout mounted; the
# checkout appears at /src. swiftlang's driver finds libswiftCore.so through its $ORIGIN RUNPATH,
# which needs /proc/self/exe, so /proc is required.
run_in() {
    local tree=$1
    shift
    [[ $(id -u) -eq 0 ]] || die "chroot needs root" 77
    # One command at a time per tree: the mounts below are shared.
    exec 9>"$tree.lock"
    flock 9
    local mounts=()
    cleanup_mounts() {
        local m
        for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
    }
    trap cleanup_mounts EXIT
    mkdir -p "$tree/src" "$tree/proc" "$tree/dev" "$tree/tmp"
    mount -t proc proc "$tree/proc" && mounts+=("$tree/proc")
    mount --rbind /dev "$tree/dev" && mount --make-rslave "$tree/dev" && mounts+=("$tree/dev")
    mount --bind "$root" "$tree/src" && mounts+=("$tree/src")
    # The sysroot for cross builds, when it exists, is visible at /sysroot-arm64.
    if [[ -d "$cache/trixie-arm64-sysroot" ]]; then
        mkdir -p "$tree/sysroot-arm64"
        mount --bind "$cache/trixie-arm64-sysroot" "$tree/sysroot-arm64" && mounts+=("$tree/sysroot-arm64")
    fi
    # The command runs as the owner of the checkout, so nothing it writes under .build is root's.
    local owner
    owner=$(stat -c %u:%g "$root")
    local status=0
    chroot "$tree" /usr/bin/setpriv --reuid="${owner%:*}" --regid="${owner#*:}" --clear-groups \
        /usr/bin/env -i HOME=/tmp PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        /bin/bash -c 'cd /src && "$@"' bash "$@" || status=$?
    cleanup_mounts
    trap - EXIT
    return "$status"
}

(($# > 0)) || usage
case "$1" in
    build) build_tree ;;
    sysroot) sysroot_tree ;;
    run) shift; (($# > 0)) || usage; tree=$(build_tree); run_in "$tree" "$@" ;;
    test) shift; (($# > 0)) || usage; tree=$(test_tree); run_in "$tree" "$@" ;;
    -h|--help) usage ;;
    *) usage ;;
esac
