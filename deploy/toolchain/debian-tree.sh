# Sourced: debian_tree, which makes a Debian tree by mmdebstrap once and reuses it while its recipe
# (suite, architecture, variant, packages and any extra mmdebstrap options) is unchanged. Used by
# deploy/toolchain/trixie-chroot.sh (the toolchain chroot and the arm64 sysroot) and
# Tests/VM/prepare.sh (the Debian 13 guest root of the VM tier).
# Mirror: BLEBRIDGE_DEBIAN_MIRROR (default http://deb.debian.org/debian).

# debian_tree DIR SUITE ARCH VARIANT PACKAGES [MMDEBSTRAP_OPTION…]: makes DIR unless it is there
# with the same recipe, and prints DIR. Needs root and mmdebstrap when it has to make it; exits 77
# (not root) or 69 (no mmdebstrap) otherwise.
debian_tree() {
    local tree=$1 suite=$2 arch=$3 variant=$4 packages=$5
    shift 5
    local mirror=${BLEBRIDGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    local recipe="$suite $arch $variant $packages${*:+ $*}"
    if [[ -f "$tree/.blebridge-recipe" && "$(cat "$tree/.blebridge-recipe")" == "$recipe" ]]; then
        echo "$tree"
        return
    fi
    [[ $(id -u) -eq 0 ]] || { echo "debian-tree: making $tree needs root (mmdebstrap)" >&2; exit 77; }
    command -v mmdebstrap >/dev/null || { echo "debian-tree: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 69; }
    mkdir -p "$(dirname "$tree")"
    rm -rf "$tree" "$tree.new"
    echo "debian-tree: making $tree ($suite $arch, $variant) from $mirror" >&2
    local started=$SECONDS
    mmdebstrap --quiet --arch="$arch" --variant="$variant" --include="$packages" \
        --skip=cleanup/apt/lists "$@" "$suite" "$tree.new" "$mirror" >&2
    echo "$recipe" >"$tree.new/.blebridge-recipe"
    # An extract-only tree lacks merged-/usr's /lib -> usr/lib links, which libc's linker scripts
    # (libm.so: GROUP ( /lib/aarch64-linux-gnu/libm.so.6 ... )) resolve inside the sysroot.
    local dir
    for dir in bin lib sbin; do
        [[ -e "$tree.new/$dir" || ! -d "$tree.new/usr/$dir" ]] || ln -s "usr/$dir" "$tree.new/$dir"
    done
    mv "$tree.new" "$tree"
    echo "debian-tree: made $tree in $((SECONDS - started)) s, $(du -sh "$tree" | cut -f1)" >&2
    echo "$tree"
}
