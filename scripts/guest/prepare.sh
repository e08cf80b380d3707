#!/bin/bash
# scripts/guest/prepare.sh - make the QEMU test guest's kernel ready.
#
# Idempotent.  Ensures the host tools are installed (qemu-system-x86,
# busybox-static, linux-headers-amd64, ...), downloads Debian's kernel image
# package that matches the installed linux-headers-amd64 (the kernel that
# buddy.ko is built against) into build/guest/, and extracts the uncompressed
# ELF vmlinux to build/guest/vmlinux.  The package is never installed.
#
# With --host-root it also unpacks the modules that run.sh --host-root loads
# in the guest (the virtio-9p stack, resolved with depmod/modprobe against the
# same package) into build/guest/host-root/.
#
# Usage: scripts/guest/prepare.sh [-q] [--host-root]
#   -q           print nothing when everything is already in place
#   --host-root  also the 9p modules for run.sh --host-root
#
# Environment: GUEST_BUILD  cache dir (default <repo>/build/guest)
#              KERNEL       boot this kernel image instead (e.g. the debug
#                           kernel's bzImage); only the host tools are checked
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GUEST_BUILD:-$root/build/guest}
quiet=0 host_root=0
for a in "$@"; do
	case $a in
	-q) quiet=1 ;;
	--host-root) host_root=1 ;;
	*) echo "usage: scripts/guest/prepare.sh [-q] [--host-root]" >&2; exit 2 ;;
	esac
done

say() { [ "$quiet" = 1 ] || echo "prepare.sh: $*"; }
die() { echo "prepare.sh: error: $*" >&2; exit 1; }

apt_updated=0
apt_update_once() {
	[ "$apt_updated" = 1 ] && return 0
	say "apt-get update"
	apt-get update -qq >/dev/null || die "apt-get update failed"
	apt_updated=1
}

# --- 1. host packages -------------------------------------------------------
# command-or-file  package
need=(
	"qemu-system-x86_64 qemu-system-x86"
	"/bin/busybox busybox-static"
	"cpio cpio"
	"xz xz-utils"
	"gcc gcc"
	"make make"
	"readelf binutils"
	"/usr/lib/x86_64-linux-gnu/libc.a libc6-dev"
	"timeout coreutils"
	"/usr/sbin/depmod kmod"
)
missing=()
for e in "${need[@]}"; do
	what=${e%% *} pkg=${e##* }
	if [ "${what#/}" != "$what" ]; then
		[ -e "$what" ] || missing+=("$pkg")
	else
		command -v "$what" >/dev/null 2>&1 || missing+=("$pkg")
	fi
done
# busybox must be the static one: the guest has no libc.
if [ -x /bin/busybox ] && readelf -l /bin/busybox 2>/dev/null | grep -q 'program interpreter'; then
	missing+=(busybox-static)
fi
dpkg-query -W -f='${Status}' linux-headers-amd64 2>/dev/null | grep -q 'ok installed' ||
	missing+=(linux-headers-amd64)
if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}) and not root"
	apt_update_once
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

# --- 2. which kernel --------------------------------------------------------
if [ -n "${KERNEL:-}" ]; then
	[ -s "$KERNEL" ] || die "KERNEL=$KERNEL: no such kernel image"
	say "using KERNEL=$KERNEL"
	exit 0
fi
kdir=$("$root/scripts/kdir.sh") || die "scripts/kdir.sh failed"
[ -f "$kdir/include/generated/utsrelease.h" ] || die "$kdir: no utsrelease.h"
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h")
[ -n "$kver" ] || die "cannot read UTS_RELEASE from $kdir"
hpkg_ver=$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null) ||
	die "linux-headers-$kver is not installed"

vmlinux=$build/vmlinux
stamp=$build/vmlinux.stamp
want="release=$kver version=$hpkg_ver"
hr=$build/host-root
vmlinux_ok() { [ -s "$vmlinux" ] && [ -f "$stamp" ] && grep -qxF "$want" "$stamp"; }
modules_ok() {
	[ "$host_root" = 0 ] ||
		{ [ -s "$hr/load-order" ] && [ -f "$hr/stamp" ] && grep -qxF "$want" "$hr/stamp"; }
}
if vmlinux_ok && modules_ok; then
	say "up to date: $vmlinux ($want)"
	exit 0
fi

mkdir -p "$build"
# Serialise concurrent prepare runs (parallel make).
exec 9>"$build/.prepare.lock"
flock 9
if vmlinux_ok && modules_ok; then
	exit 0
fi

# --- 3. fetch the image package ---------------------------------------------
# Prefer the -unsigned package (same kernel, no EFI signature); the signed
# linux-image-<ver> is equivalent for a -kernel boot.
deb=
for pkg in "linux-image-$kver-unsigned" "linux-image-$kver"; do
	f=$build/${pkg}_${hpkg_ver//:/%3a}_amd64.deb
	if [ -s "$f" ] && dpkg-deb -I "$f" >/dev/null 2>&1; then deb=$f; break; fi
done
if [ -z "$deb" ]; then
	for try in 1 2; do
		for pkg in "linux-image-$kver-unsigned" "linux-image-$kver"; do
			say "apt-get download $pkg=$hpkg_ver"
			# _apt cannot write into root-owned dirs; download in a tmp dir
			# it can write to, then move.
			dl=$(mktemp -d "$build/.dl.XXXXXX")
			chmod 777 "$dl"
			if (cd "$dl" && apt-get download -qq "$pkg=$hpkg_ver" >/dev/null 2>&1); then
				f=$(ls "$dl"/*.deb)
				mv "$f" "$build/"
				deb=$build/$(basename "$f")
				rm -rf "$dl"
				break 2
			fi
			rm -rf "$dl"
		done
		[ "$try" = 1 ] && apt_update_once
	done
fi
[ -n "$deb" ] || die "could not download linux-image-$kver(-unsigned)=$hpkg_ver (apt-cache policy linux-image-$kver-unsigned)"

ipkg=$(dpkg-deb -f "$deb" Package)
ipkg_ver=$(dpkg-deb -f "$deb" Version)
[ "$ipkg_ver" = "$hpkg_ver" ] ||
	die "$ipkg version $ipkg_ver != linux-headers-$kver version $hpkg_ver"
say "image package: $ipkg $ipkg_ver"

tmp=$(mktemp -d "$build/.x.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# --- 4. the 9p modules for run.sh --host-root --------------------------------
# The whole module tree is unpacked so that depmod sees every module and
# modprobe resolves the load order (dependencies first) from the real
# modules.dep; what is built into this kernel (modules.builtin) is skipped.
# Only the modules needed are kept.
if ! modules_ok; then
	say "unpacking the 9p modules from $ipkg"
	m=$tmp/mods
	mkdir -p "$m"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$m" --wildcards "./lib/modules/$kver/*" ||
		die "no ./lib/modules/$kver in $deb"
	PATH=$PATH:/usr/sbin:/sbin depmod -b "$m" "$kver" || die "depmod failed"
	rm -rf "$hr.new"
	mkdir -p "$hr.new"
	: >"$hr.new/load-order"
	# Leaves; modprobe adds virtio, virtio_ring, virtio_pci_*_dev, 9pnet,
	# netfs and fscache.
	for want_mod in virtio_pci 9pnet_virtio 9p; do
		PATH=$PATH:/usr/sbin:/sbin modprobe -d "$m" -S "$kver" --show-depends "$want_mod" \
			>"$tmp/deps" || die "modprobe --show-depends $want_mod failed"
		while read -r verb path _; do
			case $verb in
			builtin) echo "# $path: built in" >>"$hr.new/built-in" ;;
			insmod)
				f=$(basename "$path")
				grep -qxF "$f" "$hr.new/load-order" && continue
				cp "$path" "$hr.new/$f" || die "cannot copy $path"
				echo "$f" >>"$hr.new/load-order"
				;;
			*) die "modprobe --show-depends $want_mod: unexpected line: $verb $path" ;;
			esac
		done <"$tmp/deps"
	done
	rm -rf "$m"
	echo "$want" >"$hr.new/stamp"
	rm -rf "$hr" && mv "$hr.new" "$hr"
	say "ready: $hr ($(tr '\n' ' ' <"$hr/load-order"))"
fi
vmlinux_ok && exit 0

# --- 5. extract vmlinux -----------------------------------------------------
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./boot/vmlinuz-$kver" "./boot/config-$kver" ||
	die "no ./boot/vmlinuz-$kver in $deb"
img=$tmp/boot/vmlinuz-$kver

is_elf() { [ "$(head -c4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }

# Like the kernel's scripts/extract-vmlinux: find a compressed stream's magic
# in the bzImage and decompress from there until we get an ELF file.
extract() { # magic(grep -P) decompressor...
	local magic=$1 off
	shift
	# shellcheck disable=SC2013 # byte offsets, one word each
	for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1); do
		tail -c "+$((off + 1))" "$img" | "$@" >"$tmp/vmlinux" 2>/dev/null || true
		if [ -s "$tmp/vmlinux" ] && is_elf "$tmp/vmlinux"; then return 0; fi
	done
	return 1
}
extract '\xFD7zXZ\x00' xz -dc ||
	extract '\x1F\x8B\x08' gzip -dc ||
	extract '\x28\xB5\x2F\xFD' zstd -dc ||
	die "cannot extract an ELF vmlinux from $img"

grep -aq "Linux version $kver (" "$tmp/vmlinux" ||
	die "extracted vmlinux is not release $kver"
grep -aq "Debian ${hpkg_ver} " "$tmp/vmlinux" ||
	die "extracted vmlinux is not Debian build $hpkg_ver"

mv "$tmp/boot/config-$kver" "$build/config"
mv "$tmp/vmlinux" "$vmlinux"
echo "$want" >"$stamp"
echo "package=$ipkg" >>"$stamp"
say "ready: $vmlinux ($(($(stat -c %s "$vmlinux") / 1048576)) MiB, $want, from $ipkg)"
