#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# profile-guest.sh - where a read or write of buddy.ko's data path spends
# its time, in a QEMU guest: Debian's perf (the host's, through the guest's
# chroot of the host root, scripts/guest/run.sh --host-root) samples the
# static inproc_bench looping one call on /dev/buddy (-D /dev/buddy -l),
# kernel and user frames together, and each function's self share is
# printed, largest first, TOP lines.  Sampling starts 2 s into the run
# (perf record --delay), when the allocation is filled and the loop runs:
# a call chain through the loop (profile-path.sh's filter natively) cannot
# be unwound here, from the kernel through the static binary's frames.
#
#   profile-guest.sh REPO INPROC_BENCH KO SECONDS TOP CODEC:TARGET:OP:SIZE...
#
# REPO is the repository's absolute path (the guest's chroot sees the host's
# files at the same paths).  Under TCG every figure is relative: compare the
# shares within one run, not the times between machines.  The guest's CPU
# model is qemu64 (PROFILE_GUEST_CPU), as make bench-guest boots: with
# "max" (ERMS) the kernel's copy routines are rep movsb, which TCG runs a
# byte at a time, and copies then dwarf the rest of the profile.
set -eu

repo=$1 bench=$2 ko=$3 secs=$4 top=$5
shift 5
[ $# -gt 0 ] || { echo "profile-guest: no case given" >&2; exit 2; }
command -v perf >/dev/null ||
	{ echo "profile-guest: perf missing (apt-get install linux-perf)" >&2; exit 1; }
delay_ms=2000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$bench" "$tmp/inproc_bench"
cp "$ko" "$tmp/buddy.ko"
{
	echo 'set -e'
	echo 'insmod /opt/pg/buddy.ko device_mb=64 max_ratio=4'
	echo 'cp /opt/pg/inproc_bench /host/tmp/inproc_bench'
	for spec in "$@"; do
		codec=${spec%%:*}
		loop=${spec#*:}
		cat <<EOS
echo "## $codec $loop (perf in the guest)"
chroot /host /usr/bin/perf record -q -o /tmp/p.data -F 2000 -e cpu-clock \
    --delay $delay_ms -- /tmp/inproc_bench -D /dev/buddy \
    -c $codec -l $loop -t $((secs + delay_ms / 1000))
chroot /host /usr/bin/perf report -i /tmp/p.data --stdio --no-children \
    --sort sym 2>/dev/null | grep -E '^ +[0-9.]+%' | head -n $top
EOS
	done
} >"$tmp/guest.sh"
"$repo/scripts/guest/run.sh" --host-root --cpu "${PROFILE_GUEST_CPU:-qemu64}" \
	--timeout 1200 \
	--file "$tmp:/opt/pg" -- 'sh /opt/pg/guest.sh'
