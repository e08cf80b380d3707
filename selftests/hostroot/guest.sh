#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh REPO OUT BUDDY_KO BUDDYCTL - make check-hostroot's part inside the
# QEMU guest (scripts/guest/run.sh --host-root --host-rw OUT): run the
# host's own programs through chroot /host and leave their results in OUT
# (a writable export of a host directory, same path in the guest, in the
# chroot and on the host), where selftests/hostroot/check.py compares them
# with the host's.  BUDDY_KO is the module's path in the guest (under /host),
# BUDDYCTL the host's buddyctl (a path inside the chroot).
#
# Per step NAME: NAME.rc (status), NAME.time (seconds), NAME.out (output).

repo=$1 out=$2 ko=$3 bctl=$4
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
