#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# profile-path.sh - where a read or write of the data path spends its time,
# natively, on the in-process device (the same core/chunk.c and
# core/stripe.c as buddy.ko).
#
#   profile-path.sh BENCH SECONDS TOP CODEC:TARGET:OP:SIZE...
#
# For each case, BENCH (inproc_bench) loops the path alone (-l) under
# `perf record --call-graph dwarf`; only the samples whose call chain
# passes through the loop (path_ns) count, so the setup (data generation,
# the first fill) is left out.  Each function's self share of those samples
# is printed, largest first, TOP lines.  Where perf cannot sample (no
# perf_event access), valgrind's callgrind counts instructions instead,
# collecting inside path_ns only.  PROFILE_TOOL=callgrind forces that.
set -eu

bench=$1 secs=$2 top=$3
shift 3
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tool=${PROFILE_TOOL:-perf}
if [ "$tool" = perf ] &&
   ! perf record -q -o "$tmp/probe" -e cpu-clock true >/dev/null 2>&1; then
	echo "# perf cannot sample here: callgrind instead"
	tool=callgrind
fi

for spec in "$@"; do
	codec=${spec%%:*}
	loop=${spec#*:}
	echo "## $codec $loop ($tool)"
	if [ "$tool" = perf ]; then
		perf record -q -o "$tmp/data" -F 2000 \
		    --call-graph dwarf,16384 \
		    "$bench" -c "$codec" -l "$loop" -t "$secs"
		perf script -i "$tmp/data" -F ip,sym 2>/dev/null |
		    awk -v top="$top" -f "$here/perf-self.awk"
	else
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
		    --toggle-collect=path_ns "$bench" -c "$codec" \
		    -l "$loop" -t "$secs" 2>/dev/null
		callgrind_annotate --inclusive=no "$tmp/cg" 2>/dev/null |
		    awk '/^ *[0-9,]+ \(/ { print }' | head -n "$top"
	fi
done
