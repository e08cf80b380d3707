#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-tests.sh MODE - buddy.ko selftests, run INSIDE the QEMU guest by
# busybox sh (started by `make check-guest` through scripts/guest/run.sh).
#
#   full    2-node guest: failed loads, then the module under several
#           parameter sets, each running the harness binaries; unload and
#           reload checks in between
#   numa4   4-node guest: pools on the memory-only nodes
#   big     2-node guest with --mem 2048: a 256 MiB re-target under load,
#           and reserving a quarter of a million chunks
#   debug   the debug kernel (make check-debug): kmemleak cleared, fault
#           injection set up for fail-nth, a few selftests, the ABI fuzzer
#           with faults for $FUZZ_SECONDS or $FUZZ_OPS operations (at least
#           $FUZZ_MIN_OPS), the fuzzer's hang watchdog, unload, then
#           kmemleak scanned twice: a leak with a buddy frame fails
#   fuzz    the ABI fuzzer alone, without fault injection ($FUZZ_OPS
#           operations or $FUZZ_SECONDS), e.g. the 1M-operation run
#   codec   the codec implementations (a guest CPU with AVX2: run.sh --cpu
#           max): buddy_codec_test, then the io and mmap tests at every
#           target with the vector codecs forced on every stripe
#           (codec_impl=avx2, and gfni where listed, codec_vector_min=1)
#
# The binaries, buddy.ko and this script sit in one directory.  Every test
# binary, and every group of shell checks, is one section between
# "### BEGIN <name>" and "### END <name> rc=<status>" for the host to split
# into build/results/guest-*.log; each section ends with a kselftest
# "# Totals:" line.  The exit status is non-zero when anything failed.

dir=$(cd "$(dirname "$0")" && pwd)
ko=$dir/buddy.ko
mode=${1:-full}
status=0
SYS=/sys/class/misc/buddy
PAR=/sys/module/buddy/parameters

# ---- TAP for the shell checks -------------------------------------------
sec_begin() {
	sec=$1 n=0 pass=0 fail=0 skip=0
	echo "### BEGIN $sec"
	echo "TAP version 13"
}
sec_end() {
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	echo "### END $sec rc=$fail"
	[ "$fail" = 0 ] || status=1
}
t_ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $sec: $*"; }
t_fail() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $sec: $*"; }
t_skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n $sec: $1 # SKIP $2"; }
# check DESCRIPTION COMMAND...: a test that passes when COMMAND succeeds
check() {
	d=$1
	shift
	if "$@"; then t_ok "$d"; else t_fail "$d"; fi
}
# check_eq DESCRIPTION WANT GOT
check_eq() {
	if [ "$2" = "$3" ]; then
		t_ok "$1"
	else
		echo "# $1: want '$2', got '$3'"
		t_fail "$1"
	fi
}

# ---- helpers ---------------------------------------------------------------
loaded() { grep -q '^buddy ' /proc/modules; }
load() { insmod "$ko" "$@"; }
unload() { loaded && rmmod buddy; }
kmsg_lines() { dmesg | wc -l; }
kmsg_since() { dmesg | tail -n "+$(($1 + 1))"; }
param() { cat "$PAR/$1" 2>/dev/null; }
sum_words() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }' "$1"; }

# run_bin SECTION BINARY: one harness binary as one section
run_bin() {
	echo "### BEGIN $1"
	"$dir/$2"
	rc=$?
	echo "### END $1 rc=$rc"
	[ "$rc" = 0 ] || status=1
}

# a load that must fail and say why in the kernel log
load_fails() {
	desc=$1
	shift
	before=$(kmsg_lines)
	if load "$@" 2>/dev/null; then
		t_fail "$desc: insmod $* succeeded"
		rmmod buddy
		return
	fi
	t_ok "$desc: insmod $* fails"
	check "$desc: module not left loaded" eval '! loaded'
	check "$desc: no /dev/buddy" test ! -e /dev/buddy
	msg=$(kmsg_since "$before" | grep -i buddy | head -n 3)
	echo "# kernel log: $msg"
	check "$desc: the kernel log says why" test -n "$msg"
}

# the state of a freshly loaded module: DEVICE_MB BUDDY_MB
fresh_state() {
	dev=$(($1 * 1048576)) bud=$(($2 * 1048576))
	check "/dev/buddy is a character device" test -c /dev/buddy
	check_eq "mm_stat" "$dev 0 $bud 0 0 0 0" "$(cat $SYS/mm_stat)"
	check_eq "io_stat" "0 0 0 0 0 0 0 0" "$(cat $SYS/io_stat)"
	check_eq "window_stat" "$(($(param window_mb) * 256)) 0 0 0 0 0 0 0" "$(cat $SYS/window_stat)"
	check_eq "link_stat" "0" "$(cat $SYS/link_stat)"
	check_eq "code_stat" "0 0 0 0 0 0" "$(cat $SYS/code_stat)"
	check_eq "codecs" "[bpc] zvc bdi fpc none" "$(cat $SYS/codecs)"
	check_eq "device_node_pages add up" $(($dev / 4096)) "$(sum_words $SYS/device_node_pages)"
	check_eq "buddy_node_pages add up" $(($bud / 4096)) "$(sum_words $SYS/buddy_node_pages)"
	nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
	check_eq "device_node_pages has a column per node" "$nodes" "$(wc -w <$SYS/device_node_pages)"
	check_eq "buddy_node_pages has a column per node" "$nodes" "$(wc -w <$SYS/buddy_node_pages)"
	for f in mm_stat io_stat code_stat codecs device_node_pages buddy_node_pages \
		window_stat link_stat; do
		check_eq "$f is one line" 1 "$(wc -l <$SYS/$f)"
	done
}

# /dev/ram0, the O_DIRECT device of the pin tests and the fuzzer: built
# into the debug kernels, a module (brd.ko, next to this script) of Debian's
ram_disk() {
	[ -e /dev/ram0 ] && return 0
	[ -f "$dir/brd.ko" ] && insmod "$dir/brd.ko" rd_nr=1 rd_size=8192
}

# pages of a pool on node N: FILE NODE
node_pages() { awk -v n="$2" '{ print $(n + 1) }' "$1"; }

no_leak() {
	set -- $(cat $SYS/mm_stat)
	check_eq "$1: nothing left allocated (device_used buddy_used logical nr_allocs)" \
		"0 0 0 0" "$2 $4 $5 $6"
}

# ---- the 2-node run ------------------------------------------------------------
full() {
	sec_begin load-errors
	unload 2>/dev/null
	load_fails "device pool on a node that does not exist" device_node=7
	load_fails "carve-out on a node that does not exist" buddy_node=7
	mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	load_fails "device pool far larger than RAM (${mem_mb} MiB)" device_mb=$((mem_mb * 4))
	load_fails "carve-out far larger than RAM" device_mb=$((mem_mb / 2)) max_ratio=9
	check "insmod with defaults after the failures" load
	sec_end

	sec_begin defaults
	if loaded; then
		fresh_state 64 192
		for p in device_mb:64 max_ratio:4 device_node:-1 buddy_node:-1 \
			chunk_kb:2048 user_limit_mb:0 auto_target:128 window_mb:16 \
			link_gbps:150 link_latency_ns:500 device_gbps:900 \
			link_delay:0; do
			check_eq "parameter ${p%%:*} defaults to ${p#*:}" "${p#*:}" "$(param ${p%%:*})"
		done
	else
		t_fail "module not loaded"
	fi
	sec_end

	run_bin default-api buddy_api_test
	run_bin default-io buddy_io_test
	run_bin default-pool buddy_pool_test
	run_bin default-quota buddy_quota_test
	run_bin default-stress buddy_stress_test
	run_bin default-hostile buddy_hostile_test
	run_bin default-mmap buddy_mmap_test
	run_bin default-codec buddy_codec_test
	run_bin default-pin buddy_pin_test
	run_bin default-wait buddy_wait_test
	tracepoints

	sec_begin unload-reload
	no_leak "after the default run"
	exec 3</dev/buddy
	check "rmmod fails while /dev/buddy is open" eval '! rmmod buddy 2>/dev/null'
	exec 3<&-
	check "rmmod fails while an allocation is alive" \
		"$dir/buddy_hold" 4096 sh -c '! rmmod buddy 2>/dev/null && [ -n "$BUDDY_FD" ]'
	check "rmmod once everything is closed" rmmod buddy
	check "/dev/buddy is gone" test ! -e /dev/buddy
	check "$SYS is gone" test ! -e $SYS
	check "insmod again" load
	fresh_state 64 192
	check "rmmod right after insmod" rmmod buddy
	check "insmod a third time" load
	check_eq "mm_stat after a reload" "67108864 0 201326592 0 0 0 0" "$(cat $SYS/mm_stat 2>/dev/null)"
	unload
	sec_end

	limits

	# small chunks, pools on given nodes
	sec_begin nodes-small-chunks
	check "insmod chunk_kb=64 device_mb=32 device_node=1 buddy_node=0" \
		load chunk_kb=64 device_mb=32 device_node=1 buddy_node=0
	if loaded; then
		fresh_state 32 96
		check_eq "device pool on node 1" 8192 "$(node_pages $SYS/device_node_pages 1)"
		check_eq "nothing of the device pool on node 0" 0 "$(node_pages $SYS/device_node_pages 0)"
		check_eq "carve-out on node 0" 24576 "$(node_pages $SYS/buddy_node_pages 0)"
		check_eq "chunk_kb" 64 "$(param chunk_kb)"
	fi
	sec_end
	if loaded; then
		run_bin chunk64-api buddy_api_test
		run_bin chunk64-io buddy_io_test
		run_bin chunk64-pool buddy_pool_test
		run_bin chunk64-stress buddy_stress_test
		run_bin chunk64-hostile buddy_hostile_test
		run_bin chunk64-mmap buddy_mmap_test
		run_bin chunk64-pin buddy_pin_test
		run_bin chunk64-wait buddy_wait_test
		sec_begin chunk64-after
		no_leak "after the chunk_kb=64 run"
		check "rmmod" rmmod buddy
		sec_end
	fi

	# the per-user share
	sec_begin quota
	check "insmod user_limit_mb=8" load user_limit_mb=8
	check_eq "user_limit_mb" 8 "$(param user_limit_mb)"
	sec_end
	if loaded; then
		run_bin quota-quota buddy_quota_test
		run_bin quota-api buddy_api_test
		run_bin quota-pin buddy_pin_test
		sec_begin quota-after
		no_leak "after the quota run"
		check "rmmod" rmmod buddy
		sec_end
	fi

	# tiny pools, the smallest chunks, AUTO resolved to 2x
	sec_begin tiny
	check "insmod device_mb=8 max_ratio=2 chunk_kb=4 auto_target=64" \
		load device_mb=8 max_ratio=2 chunk_kb=4 auto_target=64
	loaded && fresh_state 8 8
	sec_end
	if loaded; then
		run_bin tiny-api buddy_api_test
		run_bin tiny-io buddy_io_test
		run_bin tiny-pool buddy_pool_test
		run_bin tiny-stress buddy_stress_test
		run_bin tiny-hostile buddy_hostile_test
		run_bin tiny-mmap buddy_mmap_test
		run_bin tiny-pin buddy_pin_test
		run_bin tiny-wait buddy_wait_test
		sec_begin tiny-after
		no_leak "after the tiny run"
		check "rmmod" rmmod buddy
		sec_end
	fi

	# no carve-out at all: only 1x allocations fit
	sec_begin no-carve-out
	check "insmod max_ratio=1 device_mb=16" load max_ratio=1 device_mb=16
	loaded && fresh_state 16 0
	sec_end
	if loaded; then
		run_bin nocarve-pool buddy_pool_test
		run_bin nocarve-io buddy_io_test
		run_bin nocarve-mmap buddy_mmap_test
		run_bin nocarve-pin buddy_pin_test
		run_bin nocarve-wait buddy_wait_test
		sec_begin nocarve-after
		no_leak "after the max_ratio=1 run"
		check "rmmod" rmmod buddy
		sec_end
	fi
}

# the tracepoints, through tracefs when the kernel has it
tracepoints() {
	sec_begin tracepoints
	T=/sys/kernel/tracing
	if [ ! -d $T/events/buddy ]; then
		t_skip "buddy events in tracefs" "no tracefs or no events/buddy"
		sec_end
		return
	fi
	for e in buddy_alloc buddy_free buddy_retarget buddy_enospc; do
		check "event $e exists" test -d $T/events/buddy/$e
	done
	echo 1 >$T/events/buddy/enable
	: >$T/trace
	"$dir/buddy_hold" 8192 sh -c 'true'
	# the second of two 100 MiB allocations (2x) does not fit a 64 MiB pool
	"$dir/buddy_hold" $((100 << 20)) "$dir/buddy_hold" $((100 << 20)) true 2>/dev/null
	echo 0 >$T/events/buddy/enable
	tr=$(cat $T/trace)
	echo "$tr" | grep buddy_ | sed 's/^/# /' | head -n 6
	check "buddy_alloc: id, size 8192, target, bytes" \
		eval 'echo "$tr" | grep -Eq "buddy_alloc: id=[0-9]+ size=8192 target=[0-9]+ codec=[0-9]+ uid=0 device_bytes=[0-9]+ buddy_bytes=[0-9]+"'
	check "buddy_free: the same size" \
		eval 'echo "$tr" | grep -Eq "buddy_free: id=[0-9]+ size=8192 "'
	check "buddy_enospc: an ALLOC that does not fit now" \
		eval 'echo "$tr" | grep -Eq "buddy_enospc: id=0 target=64 device_need=52[0-9]{6} buddy_need=52428800 device_used=52[0-9]{6} buddy_used=52428800"'
	: >$T/trace
	sec_end
}

# every parameter at its documented extremes: loads, or fails with the
# documented message and no warning (run.sh fails the run on a WARN)
limits() {
	sec_begin limits
	unload 2>/dev/null
	mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	load_fails "device_mb=0" device_mb=0
	load_fails "device_mb above its maximum" device_mb=1048577
	# the documented maximum on a guest far smaller: refused, no WARN
	before=$(kmsg_lines)
	if load device_mb=1048576 2>/dev/null; then
		t_ok "device_mb=1048576 loads (the guest has the memory)"
		rmmod buddy
	else
		t_ok "device_mb=1048576 (${mem_mb} MiB RAM) fails"
		check "device_mb=1048576: the kernel log says the pool cannot be reserved" \
			eval 'kmsg_since $before | grep -q "device pool: cannot reserve 1048576 MiB"'
	fi
	load_fails "max_ratio=0" max_ratio=0
	load_fails "max_ratio=17" max_ratio=17
	load_fails "chunk_kb=2" chunk_kb=2
	load_fails "chunk_kb=6" chunk_kb=6
	load_fails "chunk_kb above its maximum" chunk_kb=1048580
	load_fails "auto_target=100" auto_target=100
	load_fails "device_node=-2" device_node=-2
	for p in "device_mb=1" "max_ratio=1" "max_ratio=16 device_mb=8" \
		"chunk_kb=4" "chunk_kb=1048576" "user_limit_mb=4294967295" \
		"auto_target=8" "auto_target=128" "device_node=-1 buddy_node=-1"; do
		if load $p; then
			t_ok "insmod $p"
			"$dir/buddy_hold" 4096 sh -c 'true' ||
				t_fail "$p: a 4 KiB allocation"
			no_leak "$p"
			rmmod buddy
		else
			t_fail "insmod $p"
		fi
	done
	sec_end
}

# ---- the big run: large allocations under load -------------------------------
big() {
	sec_begin big-retarget
	unload 2>/dev/null
	check "insmod device_mb=512 max_ratio=2" load device_mb=512 max_ratio=2
	sec_end
	if loaded; then
		run_bin big-retarget-256mib buddy_retarget_test
		sec_begin big-retarget-after
		no_leak "after the re-target run"
		check "rmmod" rmmod buddy
		sec_end
	fi
	sec_begin big-reserve
	check "insmod device_mb=1024 chunk_kb=4 max_ratio=2" \
		load device_mb=1024 chunk_kb=4 max_ratio=2
	sec_end
	if loaded; then
		run_bin big-reserve-chunk4 buddy_retarget_test
		sec_begin big-reserve-after
		no_leak "after the reservation run"
		check "rmmod" rmmod buddy
		sec_end
	fi
}

# ---- the 4-node run: memory-only (far) nodes ---------------------------------
numa4() {
	for cfg in "device_node=0 buddy_node=2" "device_node=3 buddy_node=3 device_mb=32" \
		"device_node=2 buddy_node=3"; do
		tag=$(echo "$cfg" | tr ' =' '-_' | sed 's/device_node/d/; s/buddy_node/b/; s/device_mb/mb/')
		sec_begin "numa4-$tag"
		unload 2>/dev/null
		check "insmod $cfg" load $cfg
		dn=$(param device_node) bn=$(param buddy_node) mb=$(param device_mb)
		if loaded; then
			fresh_state "$mb" $((mb * 3))
			check_eq "device pool all on node $dn" $((mb * 256)) "$(node_pages $SYS/device_node_pages $dn)"
			check_eq "carve-out all on node $bn" $((mb * 768)) "$(node_pages $SYS/buddy_node_pages $bn)"
		fi
		sec_end
		if loaded; then
			run_bin "numa4-$tag-pool" buddy_pool_test
			run_bin "numa4-$tag-api" buddy_api_test
			sec_begin "numa4-$tag-after"
			no_leak "after $cfg"
			check "rmmod" rmmod buddy
			sec_end
		fi
	done
}

# ---- the debug kernel ----------------------------------------------------------
DBG=/sys/kernel/debug

# Fault injection for the fuzzer's fail-nth only: probability 0 everywhere,
# so nothing fails unless a task arms /proc/thread-self/fail-nth; sleeping
# allocations may fail; injected failures print nothing.
fault_setup() {
	for f in failslab fail_page_alloc fail_function; do
		[ -d $DBG/$f ] || return 1
		echo 0 >$DBG/$f/probability
		echo 0 >$DBG/$f/verbose
		echo -1 >$DBG/$f/times
		echo 0 >$DBG/$f/space
	done
	echo N >$DBG/failslab/ignore-gfp-wait
	echo N >$DBG/fail_page_alloc/ignore-gfp-wait
	echo 0 >$DBG/fail_page_alloc/min-order
	# genalloc's -ENOSPC in the middle of a re-stripe
	echo buddy_pool_alloc >$DBG/fail_function/inject
}

# Leaks kmemleak reports that have a frame in buddy.ko: "[buddy]" while
# loaded, a bare module-space address after the unload.
buddy_leaks() {
	echo scan >$DBG/kmemleak
	sleep 1
	echo scan >$DBG/kmemleak
	awk '/^unreferenced object/ { if (blk != "" && hit) print blk; blk = $0; hit = 0; next }
	     { blk = blk "\n" $0 }
	     /\[buddy\]|\[<ffffffffc0[0-9a-f]*>\] 0xffffffffc0/ { hit = 1 }
	     END { if (blk != "" && hit) print blk }' $DBG/kmemleak
}

fuzz_run() { # SECTION ARGS...
	sec=$1
	shift
	echo "### BEGIN $sec"
	"$dir/buddy_fuzz" "$@"
	rc=$?
	echo "### END $sec rc=$rc"
	[ "$rc" = 0 ] || status=1
}

# The fuzzer's hang watchdog: a worker stopped with SIGSTOP begins no
# operation, so within -H seconds the run must end in a HANG report that
# names the worker and shows kernel stacks, not run on to its -t.
fuzz_watchdog() {
	log=/tmp/fuzz-watchdog.log
	"$dir/buddy_fuzz" -s 1 -w 2 -t 120 -H 3 >$log 2>&1 &
	fz=$!
	sleep 1
	victim=
	for p in /proc/[0-9]*; do
		[ "$(awk '{ print $4 }' $p/stat 2>/dev/null)" = "$fz" ] && victim=${p#/proc/} && break
	done
	[ -n "$victim" ] && kill -STOP "$victim"
	t0=$(date +%s)
	# should the watchdog not fire, the fuzzer would run its -t 120 or
	# hang: SIGKILL it at 90 s, which fails the checks below
	(sleep 90; kill -KILL $fz 2>/dev/null) &
	killer=$!
	wait $fz
	rc=$? took=$(($(date +%s) - t0))
	kill $killer 2>/dev/null
	grep -v "^#   op " $log | sed 's/^/# /' | head -40
	check "watchdog: the fuzzer fails (rc $rc)" test "$rc" != 0
	check "watchdog: a HANG of worker pid $victim reported" \
		grep -q "^# HANG: .* (pid $victim) began no operation" $log
	check "watchdog: the state of the fuzzer's threads printed" grep -q '^#     stat: ' $log
	check "watchdog: their kernel stacks printed" grep -q '^#     \[<' $log
	check "watchdog: it ended ${took} s after the stop, well before -t 120" test "$took" -lt 60
	# the killed workers' forked children exit on their own
	i=0
	while pidof buddy_fuzz >/dev/null && [ $i -lt 20 ]; do
		sleep 0.5
		i=$((i + 1))
	done
}

debug() {
	sec_begin debug-setup
	check "kmemleak is there" test -w $DBG/kmemleak
	echo clear >$DBG/kmemleak 2>/dev/null
	check "insmod ${DEBUG_PARAMS:-(defaults)}" load $DEBUG_PARAMS
	check "fault injection set up (failslab, fail_page_alloc, fail_function on buddy_pool_alloc)" fault_setup
	sec_end
	loaded || return
	for t in ${DEBUG_TESTS:-api io}; do
		run_bin "debug-$t" "buddy_${t}_test"
	done
	fuzz_run debug-fuzz -s "${FUZZ_SEED:-1}" -w "${FUZZ_WORKERS:-4}" -f \
		-t "${FUZZ_SECONDS:-900}" -n "${FUZZ_OPS:-0}" -m "${FUZZ_MIN_OPS:-100000}"
	# last: a killed fuzzer leaves what it set, such as a profile table
	sec_begin debug-fuzz-watchdog
	fuzz_watchdog
	no_leak "after the killed fuzzer"
	sec_end
	sec_begin debug-after
	no_leak "after the debug run"
	echo >$DBG/fail_function/inject 2>/dev/null
	# kmemleak reports objects older than 5 s only
	sleep 6
	leaks=$(buddy_leaks)
	[ -z "$leaks" ] || printf '%b\n' "$leaks" | head -40 | sed 's/^/# /'
	check "kmemleak: no leak with a buddy frame (module loaded)" test -z "$leaks"
	check "rmmod" rmmod buddy
	sleep 6
	leaks=$(buddy_leaks)
	[ -z "$leaks" ] || printf '%b\n' "$leaks" | head -40 | sed 's/^/# /'
	check "kmemleak: no leak with a buddy frame (after rmmod)" test -z "$leaks"
	sec_end
}

codec() {
	sec_begin codec-setup
	check "insmod with defaults" load
	sec_end
	loaded || return
	run_bin codec buddy_codec_test
	if grep -q avx2 $PAR/codec_impl; then
		# every vector implementation the CPU runs, then the scalar one
		for impl in $(tr -d '[]' <$PAR/codec_impl | tr ' ' '\n' |
			      grep -vx scalar) scalar; do
			sec_begin "codec-$impl-setup"
			check "codec_impl=$impl codec_vector_min=1" \
				eval "echo $impl >$PAR/codec_impl && echo 1 >$PAR/codec_vector_min"
			check_eq "codec_impl shows $impl in use" "[$impl]" \
				"$(grep -o "\[$impl\]" $PAR/codec_impl)"
			sec_end
			run_bin "codec-$impl-io" buddy_io_test
			run_bin "codec-$impl-mmap" buddy_mmap_test
		done
	fi
	sec_begin codec-after
	no_leak "after the codec runs"
	check "rmmod" rmmod buddy
	sec_end
}

fuzz() {
	sec_begin fuzz-setup
	check "insmod ${FUZZ_PARAMS:-(defaults)}" load $FUZZ_PARAMS
	sec_end
	loaded || return
	fuzz_run fuzz -s "${FUZZ_SEED:-1}" -w "${FUZZ_WORKERS:-4}" \
		-t "${FUZZ_SECONDS:-600}" -n "${FUZZ_OPS:-0}" -m "${FUZZ_MIN_OPS:-0}"
	sec_begin fuzz-after
	no_leak "after the fuzzer"
	check "rmmod" rmmod buddy
	sec_end
}

echo "# guest-tests.sh $mode: $(uname -r), $(ls -d /sys/devices/system/node/node[0-9]* | wc -l) nodes, $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) kB"
ram_disk || echo "# no /dev/ram0: the O_DIRECT tests skip"
case $mode in
full) full ;;
numa4) numa4 ;;
big) big ;;
debug) debug ;;
fuzz) fuzz ;;
codec) codec ;;
*) echo "guest-tests.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
unload 2>/dev/null
echo "# guest-tests.sh $mode: done, status $status"
exit $status
