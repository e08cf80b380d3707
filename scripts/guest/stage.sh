#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/stage.sh - the one recipe of a guest stage of `make check`:
# build buddy.ko, boot the guest, turn what it printed into TAP result
# files, and count what went wrong outside the tests as failed results.
#
#   stage.sh module NAME DIR
#       build buddy.ko (`make module`, log in $B/guest/NAME-module-build.log)
#       and copy it into DIR ("-": leave it in kmod/).  A failed build is one
#       failed result in $RESULTS/guest-NAME-module.log; exit 1.
#
#   stage.sh run [--tap | --check CMD | --sections] [--block NAME=FILE]...
#                [--need FILE] NAME RUN.SH-ARGUMENTS...
#       scripts/guest/run.sh RUN.SH-ARGUMENTS, its output in
#       $B/guest/NAME.out and its console in $B/guest/NAME.console, then:
#       --tap (default)  the lines between "### TAP BEGIN" and "### TAP END"
#                        are the TAP log $RESULTS/guest-NAME.log
#       --check CMD      the shell command CMD writes the TAP log: a checker
#                        on the host reading the captured output, whose
#                        path is in $RUN
#       --sections       each "### BEGIN X" ... "### END X rc=N" section is
#                        the TAP log $RESULTS/guest-NAME-X.log
#       --block NAME=FILE  the lines between "### NAME BEGIN" and
#                        "### NAME END" also go to FILE
#       --need FILE      not run (exit 1) when FILE is missing: the module
#                        step failed and counted it
#       A TAP log without a "# Totals:" line (the guest crashed or timed
#       out) gets a failing one; a failed run.sh verdict (exit status other
#       than 0: crash, timeout, unexpected kernel log lines) is one more
#       failed result, with run.sh's verdict lines as comments, in the TAP
#       log (--sections: in $RESULTS/guest-NAME-verdict.log).  Prints the
#       failures and totals; exits with run.sh's status, or 1 when the
#       checker failed.
#
# B (default build) and RESULTS (default $B/results) come from the
# environment, MAKE too (default make).
B=${B:-build}
RESULTS=${RESULTS:-$B/results}
here=$(dirname "$0")
FAIL_TOTALS="# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"

die() { echo "stage.sh: $*" >&2; exit 2; }

# add_totals LOG WHY: a failing totals line when LOG has none
add_totals() {
	grep -q '^# Totals:' "$1" 2>/dev/null && return 0
	echo "# $2" >>"$1"
	echo "$FAIL_TOTALS" >>"$1"
}

# verdict RC RUN LOG: a failed run.sh as one failed result in LOG
verdict() {
	[ "$1" -ne 0 ] || return 0
	grep '^run.sh:' "$2" | head -40 | sed 's/^/# /' >>"$3"
	sed -n '/unexpected kernel log lines/,/^run.sh: FAIL/p' "$2" |
		head -60 | sed 's/^/# /' >>"$3"
	# the console's last lines (run.sh prints them on a failure): where a
	# timed-out guest stood
	sed -n 's/^  | /# console: /p' "$2" | tail -n 40 >>"$3"
	echo "not ok - guest run: run.sh exited $1 (see $2)" >>"$3"
	echo "$FAIL_TOTALS" >>"$3"
}

stage_module() {
	name=$1 dir=$2
	[ -n "$name" ] && [ -n "$dir" ] || die "usage: stage.sh module NAME DIR"
	mkdir -p "$RESULTS" "$B/guest"
	log=$RESULTS/guest-$name-module.log build=$B/guest/$name-module-build.log
	rm -f "$log"
	[ "$dir" = - ] || { mkdir -p "$dir" && rm -f "$dir/buddy.ko"; }
	if ${MAKE:-make} --no-print-directory module >"$build" 2>&1 &&
	   { [ "$dir" = - ] || cp kmod/buddy.ko "$dir/buddy.ko"; }; then
		echo "$name: buddy.ko built"
		return 0
	fi
	tail -30 "$build"
	{
		echo "not ok 1 - buddy.ko builds (see $build)"
		echo "$FAIL_TOTALS"
	} >"$log"
	echo "$name: buddy.ko does not build: see $build"
	exit 1
}

# cut BEGIN END RUN: the lines between the two markers
cut_block() {
	awk -v b="$1" -v e="$2" 'index($0, b) == 1 { f = 1; next }
		index($0, e) == 1 { f = 0; next } f' "$3"
}

# split_sections NAME RUN: one log per "### BEGIN X" section
split_sections() {
	awk -v out="$RESULTS" -v run="$1" -v fail="$FAIL_TOTALS" '
		/^### BEGIN / { f = out "/guest-" run "-" $3 ".log"; printf "" > f
			tot = 0; next }
		/^### END / { if (f && !tot) {
				print "# " $3 ": no totals (" $4 ", crashed?)" >> f
				print fail >> f }
			close(f); f = ""; next }
		f { print >> f; if ($0 ~ /^# Totals:/) tot = 1 }
		END { if (f && !tot) { print "# section cut short (guest died?)" >> f
				print fail >> f } }' "$2"
}

stage_run() {
	mode=tap check='' need='' blocks=''
	while [ $# -gt 0 ]; do
		case $1 in
		--tap) mode=tap; shift ;;
		--sections) mode=sections; shift ;;
		--check) mode=check; check=${2:?}; shift 2 ;;
		--block) blocks="$blocks ${2:?}"; shift 2 ;;
		--need) need=${2:?}; shift 2 ;;
		-*) die "run: unknown option $1" ;;
		*) break ;;
		esac
	done
	name=${1:?stage name}
	shift
	mkdir -p "$RESULTS" "$B/guest"
	run=$B/guest/$name.out
	if [ -n "$need" ] && [ ! -f "$need" ]; then
		echo "$name: no $need, not run"
		exit 1
	fi
	[ "$mode" = sections ] && rm -f "$RESULTS/guest-$name"-*.log
	echo "$name: scripts/guest/run.sh $*"
	"$here/run.sh" --log "$B/guest/$name.console" "$@" >"$run" 2>&1
	rc=$?
	for b in $blocks; do
		cut_block "### ${b%%=*} BEGIN" "### ${b%%=*} END" "$run" >"${b#*=}"
	done
	crc=0
	case $mode in
	tap)
		log=$RESULTS/guest-$name.log
		cut_block "### TAP BEGIN" "### TAP END" "$run" >"$log"
		add_totals "$log" "$name: no totals (crashed or timed out?)"
		verdict $rc "$run" "$log"
		grep -E '^not ok |^# Totals' "$log"
		;;
	check)
		log=$RESULTS/guest-$name.log
		RUN=$run sh -c "$check" >"$log" 2>&1
		crc=$?
		add_totals "$log" "$name: the checker exited $crc without totals"
		verdict $rc "$run" "$log"
		grep -E '^not ok |^# Totals' "$log"
		;;
	sections)
		split_sections "$name" "$run"
		if [ $rc -ne 0 ]; then
			verdict $rc "$run" "$RESULTS/guest-$name-verdict.log"
		fi
		for f in "$RESULTS/guest-$name"-*.log; do
			[ -f "$f" ] || continue
			grep -hE '^not ok ' "$f"
			printf '  %-44s %s\n' "$(basename "$f" .log)" \
			    "$(grep -h '^# Totals' "$f" | tail -1 |
			       sed 's/^# Totals: //; s/ xfail:0 xpass:0//')"
		done
		;;
	esac
	echo "$name: output in $run"
	[ $rc -eq 0 ] || exit $rc
	[ $crc -eq 0 ] || exit 1
	exit 0
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
module) stage_module "$@" ;;
run) stage_run "$@" ;;
*) die "usage: stage.sh module NAME DIR | stage.sh run [OPTIONS] NAME RUN.SH-ARGUMENTS" ;;
esac
