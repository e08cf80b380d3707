#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/debug-kernel/build.sh [kasan|kcsan] - build (or find in the cache)
# the debug guest kernel: Debian's linux-source-6.1, tinyconfig plus
# scripts/debug-kernel/debug.config.  Prints the cache directory on stdout:
#   <dir>/arch/x86/boot/bzImage   the kernel the guest boots (KERNEL=)
#   <dir>                         the build tree for `make M=` (KDIR=)
#
# The cache lives outside the clone, keyed by a hash of the resolved config
# fragment, the linux-source package version and the gcc version:
#   $BUDDY_KCACHE (default /var/cache/buddy/debug-kernel)/<variant>-<key>
# A key is built once; a failed or interrupted build resumes where it
# stopped (same configuration, so make is incremental).  JOBS (default 2) is make's -j.  The build log is <dir>.log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
variant=${1:-kasan}
case $variant in kasan | kcsan) ;; *) echo "build.sh: unknown variant '$variant'" >&2; exit 2 ;; esac
cache=${BUDDY_KCACHE:-/var/cache/buddy/debug-kernel}
tarball=${LINUX_SRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
jobs=${JOBS:-2}
frag_src=$here/debug.config

say() { echo "build.sh: $*" >&2; }
die() { echo "build.sh: error: $*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball missing (apt-get install linux-source-6.1)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
	die "linux-source-6.1 is not installed"
gccver=$(${CC:-gcc} --version | head -n 1)

# The fragment this variant uses: the common part and its own section.
frag=$(awk -v v="$variant" '
	/^# \[[a-z]+\]$/ { sec = substr($2, 2, length($2) - 2); next }
	sec == "" || sec == v' "$frag_src")
key=$(printf '%s\n--\n%s\n--\n%s\n' "$frag" "$srcver" "$gccver" | sha256sum | cut -c1-16)
out=$cache/$variant-$key
if [ -f "$out/.buddy-ready" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock-$variant-$key"
flock 9
if [ -f "$out/.buddy-ready" ]; then echo "$out"; exit 0; fi

# The source, unpacked once per linux-source version (all variants share it).
src=$cache/src-$srcver
if [ ! -f "$src/.buddy-unpacked" ]; then
	say "unpacking $tarball into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.buddy-unpacked"
	mv "$src.tmp" "$src"
fi

log=$out.log
mkdir -p "$out"
printf '%s\n' "$frag" >"$out/buddy-debug.config"
kmake() { make -C "$src" O="$out" ARCH=x86_64 "$@"; }
say "building $variant kernel into $out (log: $log, -j$jobs)"
start=$(date +%s)
{
	echo "=== $(date -u): build.sh $variant"
	kmake tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$out/buddy-debug.config"
	kmake olddefconfig
} >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configuration failed"; }

# Every line of the fragment must have taken effect: a dependency that
# silently drops an option would quietly test less.
bad=0
while IFS= read -r l; do
	case $l in CONFIG_*=*) ;; *) continue ;; esac
	opt=${l%%=*} val=${l#*=}
	if [ "$val" = n ]; then
		if grep -q "^$opt=" "$out/.config"; then say "$opt is set, wanted n"; bad=1; fi
	elif ! grep -qxF "$l" "$out/.config"; then
		say "$l did not take: $(grep "^$opt=\|^# $opt is not set" "$out/.config" || echo absent)"
		bad=1
	fi
done <"$out/buddy-debug.config"
[ "$bad" = 0 ] || die "config fragment did not apply (see $out/.config)"

kmake -j"$jobs" all >>"$log" 2>&1 || { tail -n 40 "$log" >&2; die "kernel build failed (log: $log)"; }
[ -s "$out/arch/x86/boot/bzImage" ] && [ -s "$out/Module.symvers" ] ||
	die "no bzImage or Module.symvers after the build"
# Objects are not needed for `make M=` against this tree.
find "$out" -name '*.o' -not -path "$out/scripts/*" -not -path "$out/tools/*" -delete
{
	echo "variant=$variant"
	echo "linux-source=$srcver"
	echo "gcc=$gccver"
	echo "build-seconds=$(($(date +%s) - start))"
	echo "release=$(cat "$out/include/config/kernel.release")"
} >"$out/.buddy-ready"
say "built in $(($(date +%s) - start)) s: $out"
echo "$out"
