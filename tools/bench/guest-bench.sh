#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/bench/guest-bench.sh - run dev_bench in one QEMU guest, next to zram.
#
# Host (what `make bench-guest` runs):
#   tools/bench/guest-bench.sh --bench DEV_BENCH --ko BUDDY_KO [--mem MB]
#       [--device-mb MB] [--timeout SEC] [--out FILE]
#       [--scaling INPROC_BENCH [--scaling-secs SEC]] [-- DEV_BENCH_ARGS...]
#
#   Takes zram.ko, lz4.ko and their dependencies (modinfo -F depends, on the
#   host) from the Debian linux-image package that scripts/guest/prepare.sh
#   downloaded (unpacked once into build/guest/bench/modules-<release>/),
#   stages them with buddy.ko, dev_bench and this script, and boots the guest
#   with scripts/guest/run.sh.  The table dev_bench prints is saved to FILE
#   (default build/results/bench-guest.txt).  With --scaling, the static
#   inproc_bench then measures buddy.ko's two-thread scaling in the same
#   guest (inproc_bench -D /dev/buddy -s -t SEC, default 8); its table and
#   goal are added to FILE.
#
# Guest (run by the above inside the guest):
#   guest-bench.sh --guest DEVICE_MB SCALING_SECS [DEV_BENCH_ARGS...]
#   insmod buddy.ko device_mb=DEVICE_MB, insmod the zram modules in order,
#   run dev_bench -z /dev/zram0 DEV_BENCH_ARGS, then (when staged)
#   inproc_bench -D /dev/buddy -s -t SCALING_SECS.
set -uo pipefail

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
	here=$(dirname "$0")
	devmb=${2:?device_mb}
	scale_secs=${3:?scaling seconds}
	shift 3
	cd "$here" || exit 1
	echo "guest-bench: insmod buddy.ko device_mb=$devmb"
	insmod ./buddy.ko "device_mb=$devmb" || exit 1
	for m in kmods/*.ko; do
		echo "guest-bench: insmod $m"
		insmod "$m" || exit 1
	done
	[ -b /dev/zram0 ] || { echo "guest-bench: no /dev/zram0" >&2; exit 1; }
	./dev_bench -z /dev/zram0 "$@"
	rc=$?
	[ -x ./inproc_bench ] || exit $rc
	echo "=== inproc_bench scaling ==="
	./inproc_bench -D /dev/buddy -s -t "$scale_secs"
	src=$?
	echo "=== end inproc_bench scaling ==="
	[ $rc = 0 ] && rc=$src
	exit $rc
fi

# ----------------------------------------------------------------- host side
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
guest=${GUEST_BUILD:-$root/build/guest}
work=$guest/bench

die() { echo "guest-bench: error: $*" >&2; exit 2; }

bench='' ko='' mem=512 devmb=128 timeout_s=900 out=$root/build/results/bench-guest.txt
scaling='' scale_secs=8
while [ $# -gt 0 ]; do
	case $1 in
	--bench) bench=${2:?}; shift 2 ;;
	--ko) ko=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--device-mb) devmb=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--scaling) scaling=${2:?}; shift 2 ;;
	--scaling-secs) scale_secs=${2:?}; shift 2 ;;
	-h | --help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
	--) shift; break ;;
	*) die "unknown argument '$1'" ;;
	esac
done
[ -x "$bench" ] || die "--bench: not an executable: '$bench'"
[ -f "$ko" ] || die "--ko: no such module: '$ko'"
[ -z "$scaling" ] || [ -x "$scaling" ] ||
	die "--scaling: not an executable: '$scaling'"
case $scale_secs in
'' | *[!0-9]* | 0) die "--scaling-secs: want whole seconds > 0, not '$scale_secs'" ;;
esac

command -v modinfo >/dev/null || die "modinfo missing (apt-get install kmod)"
"$root/scripts/guest/prepare.sh" -q || die "scripts/guest/prepare.sh failed"

# --- the guest kernel's image package ----------------------------------------
stamp=$guest/vmlinux.stamp
kver=$(sed -n 's/^release=\([^ ]*\) .*/\1/p' "$stamp")
kpkgver=$(sed -n 's/^release=[^ ]* version=\(.*\)$/\1/p' "$stamp")
kpkg=$(sed -n 's/^package=//p' "$stamp")
if [ -z "$kver" ] || [ -z "$kpkgver" ] || [ -z "$kpkg" ]; then
	die "cannot parse $stamp"
fi
deb=$guest/${kpkg}_${kpkgver//:/%3a}_amd64.deb
[ -s "$deb" ] || die "$deb missing (remove $stamp and rerun scripts/guest/prepare.sh)"

# --- zram, lz4 and their dependencies, unpacked on demand ----------------------
moddir=$work/modules-$kver
mkdir -p "$moddir"
listing=$moddir/.listing
if [ ! -s "$listing" ] || [ "$deb" -nt "$listing" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -t >"$listing.tmp" ||
		die "cannot list $deb"
	mv "$listing.tmp" "$listing"
fi

# Member path of module NAME (depends names use '_'; files may use '-').
member_of() {
	grep -m1 -E "^\./lib/modules/$kver/kernel/.*/(${1}|${1//_/-})\.ko$" "$listing"
}

# Breadth-first over modinfo -F depends; each level unpacked in one tar pass.
declare -A seen=() path=()
order=()
level=(zram lz4)
while [ ${#level[@]} -gt 0 ]; do
	members=()
	for n in "${level[@]}"; do
		m=$(member_of "$n") || die "module $n not in $deb"
		path[$n]=$moddir/${m#./}
		[ -f "${path[$n]}" ] || members+=("$m")
	done
	if [ ${#members[@]} -gt 0 ]; then
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$moddir" "${members[@]}" ||
			die "cannot unpack ${members[*]} from $deb"
	fi
	next=()
	for n in "${level[@]}"; do
		order+=("$n")
		deps=$(modinfo -F depends "${path[$n]}") || die "modinfo ${path[$n]} failed"
		for d in ${deps//,/ }; do
			[ -n "${seen[$d]:-}" ] && continue
			seen[$d]=1
			next+=("$d")
		done
	done
	level=("${next[@]}")
done

# Load order: dependencies first, i.e. reverse BFS order, each once.
stage=$work/stage
rm -rf "$stage"
mkdir -p "$stage/kmods"
declare -A staged=()
i=0
for ((k = ${#order[@]} - 1; k >= 0; k--)); do
	n=${order[$k]}
	[ -n "${staged[$n]:-}" ] && continue
	staged[$n]=1
	i=$((i + 1))
	cp "${path[$n]}" "$stage/kmods/$(printf '%02d' $i)-$n.ko"
done
cp "$bench" "$stage/dev_bench"
cp "$ko" "$stage/buddy.ko"
[ -z "$scaling" ] || cp "$scaling" "$stage/inproc_bench"
install -m 755 "${BASH_SOURCE[0]}" "$stage/guest-bench.sh"
echo "guest-bench: guest modules (load order): $(cd "$stage/kmods" && echo *.ko)"

# --- one guest ---------------------------------------------------------------
args=
for a in "$@"; do args+=" '${a//\'/\'\\\'\'}'"; done
runout=$work/run.out
mkdir -p "$(dirname "$out")"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "guest-bench: scripts/guest/run.sh --mem $mem (2 nodes), buddy.ko device_mb=$devmb, dev_bench$args"
"$root/scripts/guest/run.sh" --mem "$mem" --timeout "$timeout_s" \
	--log "$work/console.log" --file "$stage:/opt/bench" -- \
	"sh /opt/bench/guest-bench.sh --guest $devmb $scale_secs$args" 2>&1 | tee "$runout"
rc=${PIPESTATUS[0]}

sed -n '/^=== dev_bench table ===$/,/^=== end dev_bench table ===$/p' "$runout" |
	sed '1d;$d' >"$out.tmp"
if ! grep -q '^=== end dev_bench table ===$' "$runout" || [ ! -s "$out.tmp" ]; then
	rm -f "$out.tmp"
	echo "guest-bench: no table in the guest's output (run.sh status $rc; see $runout, $work/console.log)" >&2
	exit $((rc ? rc : 1))
fi
# the resident window's table, when the module has mmap
sed -n '/^=== dev_bench mmap table ===$/,/^=== end dev_bench mmap table ===$/p' "$runout" |
	sed '1d;$d' >>"$out.tmp"
# buddy.ko's two-thread scaling, with --scaling
if [ -n "$scaling" ]; then
	sed -n '/^=== inproc_bench scaling ===$/,/^=== end inproc_bench scaling ===$/p' "$runout" |
		sed '1d;$d' >"$out.scale"
	if ! grep -q '^goal: 2 threads' "$out.scale"; then
		echo "guest-bench: no scaling goal in the guest's output (see $runout)" >&2
		rc=$((rc ? rc : 1))
	fi
	cat "$out.scale" >>"$out.tmp"
	rm -f "$out.scale"
fi
host="host: $(nproc) CPUs, load average $load0 before the guest, $(cut -d' ' -f1-3 /proc/loadavg) after"
host+=" (TCG timings move with host load)"
echo "$host" >>"$out.tmp"
mv "$out.tmp" "$out"
echo "guest-bench: $host"
echo "guest-bench: table saved to ${out#"$root"/}"
exit "$rc"
