#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh REPO OUT BUDDY_KO BUDDYCTL [RUNPROG [HPCPROG]] - make check-hostroot's part inside the
# QEMU guest (scripts/guest/run.sh --host-root --host-rw OUT): run the
# host's own programs through chroot /host and leave their results in OUT
# (a writable export of a host directory, same path in the guest, in the
# chroot and on the host), where selftests/hostroot/check.py compares them
# with the host's.  BUDDY_KO is the module's path in the guest (under /host),
# BUDDYCTL the host's buddyctl (a path inside the chroot).
#
# Per step NAME: NAME.rc (status), NAME.time (seconds), NAME.out (output).

repo=$1 out=$2 ko=$3 bctl=$4 runprog=${5:-} hpcprog=${6:-}
mkdir -p "$out/lammps" || exit 1

now() { cut -d' ' -f1 /proc/uptime; }

step() { # name command...
	name=$1
	shift
	t0=$(now)
	"$@" >"$out/$name.out" 2>&1
	rc=$?
	echo $rc >"$out/$name.rc"
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f\n", b - a }' >"$out/$name.time"
	echo "guest.sh: $name: status $rc, $(cat "$out/$name.time") s"
	[ $rc = 0 ] || tail -n 30 "$out/$name.out"
}

# buddy.ko loaded by the guest; /dev/buddy reaches the chroot through its
# /dev bind mount.  device_mb and max_ratio: see check.py.
buddy() {
	insmod "$ko" device_mb=16 max_ratio=3 || return 1
	chroot /host /bin/sh -c "test -c /dev/buddy && exec $bctl info --json" \
		>"$out/buddyctl-info.json"
	rc=$?
	rmmod buddy || return 1
	return $rc
}

step buddy buddy
# One python process: torch is imported once per boot.
step compute chroot /host /usr/bin/python3 "$repo/selftests/hostroot/compute.py" \
	"$out/compute.json"
step lammps chroot /host /bin/sh -c "cd '$out/lammps' && exec /usr/bin/lmp \
	-in '$repo/selftests/hostroot/in.melt' -log log.lammps -screen none"

# The same programs under `buddyctl run`: their allocations of
# 64 KiB and more in buddy memory, mapped through the module's resident
# window, with a device pool (4 MiB; at 4x 16 MiB of data at most) and a
# window (2 MiB) smaller than their footprints; what does not fit falls
# back to ordinary memory.  Outputs go next to the plain runs' for
# check.py; run-*.json are the reports.
BRUN="$bctl run -q --labels 0 --min-size 64K -t 4x"
step run-load insmod "$ko" device_mb=4 max_ratio=4 window_mb=2
if [ -n "$runprog" ]; then
	chroot /host "$runprog" all >"$out/runprog-plain.out" 2>&1
	echo $? >"$out/runprog-plain.rc"
	step run-runprog chroot /host /bin/sh -c "$BRUN --min-size 1M \
		--json-out '$out/run-runprog.json' -o '$out/run-runprog.rep' \
		-- '$runprog' all >'$out/run-runprog.stdout'"
fi
step run-compute chroot /host /bin/sh -c "$BRUN \
	--json-out '$out/run-compute.json' -o '$out/run-compute.rep' \
	-- /usr/bin/python3 '$repo/selftests/hostroot/compute.py' \
	'$out/run-compute-result.json'"
mkdir -p "$out/run-lammps"
step run-lammps chroot /host /bin/sh -c "cd '$out/run-lammps' && $BRUN \
	--json-out '$out/run-lammps.json' -o '$out/run-lammps.rep' \
	-- /usr/bin/lmp -in '$repo/selftests/hostroot/in.melt' \
	-log log.lammps -screen none"
# hpcprog: aligned blocks mapped at their alignment; a working set (8 MiB)
# four times the window (2 MiB) swept 6 times over, which must thrash and
# say so (progress lines on, -q off); a block written back by msync and
# written again, whose second writes are window hits.
if [ -n "$hpcprog" ]; then
	chroot /host "$hpcprog" aligned >"$out/aligned-plain.out" 2>&1
	step run-aligned chroot /host /bin/sh -c "$BRUN --min-size 1M \
		--json-out '$out/run-aligned.json' -o '$out/run-aligned.rep' \
		-- '$hpcprog' aligned >'$out/run-aligned.stdout'"
	step run-thrash chroot /host /bin/sh -c "$bctl run --labels 0 --min-size 1M \
		-t 4x --progress 1 --json-out '$out/run-thrash.json' \
		-o '$out/run-thrash.rep' -- '$hpcprog' sweep 8 6 \
		>'$out/run-thrash.stdout' 2>'$out/run-thrash.err'"
	step run-hits chroot /host /bin/sh -c "$BRUN --min-size 1M \
		--json-out '$out/run-hits.json' -o '$out/run-hits.rep' \
		-- '$hpcprog' resync 1 >'$out/run-hits.stdout'"
fi
# GNU sort of an 8 MiB file on the writable 9p export (no cache: 9p reads
# straight into the program's buffers, its zero-copy path holding the
# window pages it fills), plain and under buddyctl run with the 2 MiB
# window; check.py compares the outputs.
sort_input() {
	chroot /host /usr/bin/awk 'BEGIN { srand(11)
		for (i = 0; i < 204601; i++)
			printf "%010d %08x %020d\n", int(rand() * 2147483647),
				int(rand() * 2147483647), i }' >"$out/sort-in.txt"
}
step sort-input sort_input
step sort-plain chroot /host /bin/sh -c "/usr/bin/sort -S 16M \
	'$out/sort-in.txt' >'$out/sort-plain.txt'"
# sort's 16 MiB buffer is larger than this guest's device takes: most of
# the tracked bytes fall back, which run reports with exit 1 unless told
# (what is checked here is that the 8 MiB in buddy memory read right)
step run-sort chroot /host /bin/sh -c "$BRUN --allow-fallback \
	--json-out '$out/run-sort.json' -o '$out/run-sort.rep' \
	-- /usr/bin/sort -S 16M '$out/sort-in.txt' >'$out/sort-run.txt'"
# nothing stays mapped once they exited: the module unloads.  The last
# references go with the programs' exit, which the kernel may finish a
# moment after their parent saw it (deferred fput, io_uring teardown): a
# few tries, each printed; a reference that stays fails.
unload() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rmmod buddy && return 0
		sleep 1
	done
	return 1
}
step run-unload unload

# Every activation policy of buddy.torch on /dev/buddy and on
# the in-process device, in one process: check-hostroot compares the two
# (selftests/dnn/backends.py).
step dnn-load insmod "$ko" device_mb=64 max_ratio=4
step dnn chroot /host /usr/bin/python3 "$repo/selftests/dnn/backends.py" run \
	"$out/dnn.json" /dev/buddy inproc:device_mb=64,max_ratio=4
step dnn-unload unload
