#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fault-ipf.sh - instructions per fault of the window's data path, natively,
# against the codec alone on the same 32 entries (the goal: a fault
# costs at most 1.2x decoding its 32 entries with the codec alone).
#
#   fault-ipf.sh BENCH CODEC PAGES TOP "TARGETS" "CLASSES"
#
# For each target and data class, BENCH (fault_bench) runs once under
# valgrind's callgrind; each of its four loops' inclusive instructions (Ir)
# divided by its pages is the cost of one page: fault-in (buddy_stripe_rw
# read of a page, as page_entries_io() runs it), write-back (the write),
# and the codec alone decoding and encoding the same 32 entries.  Ratios
# are path / codec.  Instruction counts do not depend on the machine's
# load.  The goal is judged on the compressed targets (1x stores plain:
# its "codec" is a copy, shown for reference).  Where a fault-in misses
# the goal, its own callgrind run (collecting inside fault_in_pages only)
# prints the TOP functions by self instructions.
set -eu

bench=$1 codec=$2 pages=$3 top=$4 targets=$5 classes=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# inclusive Ir of FN in callgrind output file $1
ir_of() {
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$1" 2>/dev/null |
	    awk -v fn="$2" '$0 ~ ":" fn " " || $0 ~ ":" fn "$" {
		gsub(",", "", $1); print $1; exit }'
}

echo "# the window's fault data path (core/stripe.c) vs the codec alone, codec $codec"
echo "# instructions per 4 KiB page (valgrind callgrind, $pages pages per case)"
echo "# fault-in: buddy_stripe_rw read of a page vs buddy_entry_decode x 32"
echo "# write-back: buddy_stripe_rw write of a page vs buddy_entry_encode x 32"
printf '%-6s %-9s %10s %10s %6s %10s %10s %6s\n' target class \
    fault_in decode ratio wback encode ratio
worst_in=0 worst_wb=0 miss=""
for t in $targets; do
	for d in $classes; do
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
		    "$bench" -c "$codec" -t "$t" -d "$d" -p "$pages" \
		    >"$tmp/out" 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			exit 1
		}
		fi=$(ir_of "$tmp/cg" fault_in_pages)
		wb=$(ir_of "$tmp/cg" write_back_pages)
		de=$(ir_of "$tmp/cg" codec_decode_pages)
		en=$(ir_of "$tmp/cg" codec_encode_pages)
		if [ -z "$fi" ] || [ -z "$wb" ] || [ -z "$de" ] || [ -z "$en" ]; then
			echo "fault-ipf: $t $d: a loop is missing from callgrind's output" >&2
			exit 1
		fi
		line=$(awk -v t="$t" -v d="$d" -v p="$pages" -v fi="$fi" \
		    -v wb="$wb" -v de="$de" -v en="$en" 'BEGIN {
			printf "%-6s %-9s %10.0f %10.0f %6.2f %10.0f %10.0f %6.2f\n",
			    t, d, fi / p, de / p, fi / de, wb / p, en / p, wb / en
		}')
		echo "$line"
		[ "$t" = 1x ] && continue
		r_in=$(echo "$line" | awk '{ print $5 }')
		r_wb=$(echo "$line" | awk '{ print $8 }')
		worst_in=$(awk -v a="$worst_in" -v b="$r_in" 'BEGIN { print (b > a) ? b : a }')
		worst_wb=$(awk -v a="$worst_wb" -v b="$r_wb" 'BEGIN { print (b > a) ? b : a }')
		if awk -v r="$r_in" 'BEGIN { exit !(r > 1.2) }'; then
			miss="$miss $t:$d"
		fi
	done
done

for m in $miss; do
	t=${m%%:*} d=${m#*:}
	echo "## fault-in $t $d: functions by self instructions inside fault_in_pages"
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
	    --toggle-collect=fault_in_pages "$bench" -c "$codec" -t "$t" \
	    -d "$d" -p "$pages" >/dev/null 2>&1
	callgrind_annotate --inclusive=no --threshold=100 --auto=no "$tmp/cg" 2>/dev/null |
	    awk '/^ *[0-9,]+ \(/ { print }' | head -n "$top"
done

echo "# goal of the window's data path, compressed targets:"
awk -v r="$worst_in" 'BEGIN {
	printf "goal: fault-in <= 1.20x the codec decoding its 32 entries (worst case): %.2fx  %s\n",
	    r, r <= 1.2 ? "met" : "NOT met" }'
awk -v r="$worst_wb" 'BEGIN {
	printf "goal: write-back <= 1.20x the codec encoding its 32 entries (worst case): %.2fx  %s\n",
	    r, r <= 1.2 ? "met" : "NOT met" }'
