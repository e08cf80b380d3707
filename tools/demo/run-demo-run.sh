#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/demo/run-demo-run.sh - the second part of `make demo`: a
# real program whose data does not fit the device pool runs to completion in
# buddy memory.  tools/demo/fmnist_stats.py (numpy statistics of the
# Fashion-MNIST test images, about 100 MiB of large arrays) runs on the host,
# then in the QEMU guest (scripts/guest/run.sh --host-root) under
# `buddyctl run -t 4x` with buddy.ko's device pool at DEMO_RUN_DEVICE_MB
# (64 MiB, 256 MiB of data at 4x: the program's 229 MiB of live large
# allocations, OpenBLAS's 128 MiB buffer among them, are over three times
# the device pool; a smaller pool leaves most of them in ordinary memory,
# which `run` rightly fails) and a 4 MiB resident window, and in the
# guest in ordinary memory.  The two guest outputs must be identical (the
# host's may differ in the last digits: TCG's CPU model lacks the vector
# extensions OpenBLAS picks its kernels by); the per-label table, the
# bandwidth sweep (its slowdowns relative to the host's run time) and the
# baselines are printed.
#
# Needs: make module, build/buddyctl and build/libbuddyprof.so,
# dataset-fashion-mnist and python3-numpy.  Output in build/demo/run/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/demo/run
device_mb=${DEMO_RUN_DEVICE_MB:-64}
timeout_s=${DEMO_TIMEOUT:-600}

die() { echo "run-demo-run.sh: error: $*" >&2; exit 2; }
[ -f "$root/kmod/buddy.ko" ] || die "no kmod/buddy.ko (make module)"
[ -x "$root/build/buddyctl" ] && [ -f "$root/build/libbuddyprof.so" ] ||
	die "no build/buddyctl or build/libbuddyprof.so (make tools)"
fmnist=$(dpkg -L dataset-fashion-mnist 2>/dev/null |
	 grep -E '/t10k-images-idx3-ubyte\.gz$' | head -n 1) || true
[ -n "$fmnist" ] && [ -s "$fmnist" ] ||
	die "the Fashion-MNIST test images are missing (apt-get install dataset-fashion-mnist)"

rm -rf "$out"
mkdir -p "$out/guest"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
t0=$(date +%s.%N)
/usr/bin/python3 "$here/fmnist_stats.py" "$fmnist" >"$out/host.out" ||
	die "fmnist_stats.py failed on the host"
host_s=$(echo "$(date +%s.%N) - $t0" | bc)
echo "run-demo-run.sh: host run: $host_s s"

guest_cmds="
chroot /host /bin/sh -c 'OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	/usr/bin/python3 $here/fmnist_stats.py $fmnist >$out/guest/plain.out' || exit 1
insmod /host$root/kmod/buddy.ko device_mb=$device_mb max_ratio=4 window_mb=4 \
	device_node=0 buddy_node=1 || exit 1
chroot /host /bin/sh -c 'OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	$root/build/buddyctl run -q -t 4x --labels 10 --base-time $host_s \
	--json-out $out/guest/run.json -o $out/guest/run.rep \
	-- /usr/bin/python3 $here/fmnist_stats.py $fmnist >$out/guest/guest.out'
rc=\$?
rmmod buddy || { echo 'run-demo-run.sh: rmmod buddy failed'; rc=1; }
exit \$rc
"
set +e
"$root/scripts/guest/run.sh" --host-root --host-rw "$out/guest" --nodes 2 \
	--timeout "$timeout_s" --log "$out/console.log" -- "$guest_cmds" \
	>"$out/guest.log" 2>&1
rc=$?
set -e
grep -E '^run.sh:' "$out/guest.log" || true
if [ "$rc" != 0 ]; then
	tail -n 30 "$out/guest.log"
	echo "run-demo-run.sh: FAIL: status $rc (log $out/guest.log)" >&2
	exit "$rc"
fi
echo "== fmnist_stats.py in buddy memory (device pool ${device_mb} MiB, window 4 MiB):"
cat "$out/guest/guest.out"
cat "$out/guest/run.rep"
cmp -s "$out/host.out" "$out/guest/plain.out" ||
	echo "run-demo-run.sh: note: the guest's ordinary-memory output differs from the host's (CPU model)"
if cmp -s "$out/guest/plain.out" "$out/guest/guest.out"; then
	echo "run-demo-run.sh: PASS: output identical to the guest's ordinary-memory run"
else
	diff "$out/guest/plain.out" "$out/guest/guest.out" || true
	echo "run-demo-run.sh: FAIL: output differs from the ordinary-memory run" >&2
	exit 1
fi
