# SPDX-License-Identifier: GPL-2.0
#
# perf-self.awk - each function's self share of the samples taken inside
# inproc_bench's measured loop (path_ns), from `perf script -F ip,sym` of a
# `perf record --call-graph dwarf` run; the TOP (-v top=N) largest, and the
# number of samples.  Used by profile-path.sh (natively) and
# profile-guest.sh (buddy.ko in a guest: kernel frames come first).
#
# Self cost: the sample's innermost function that was not inlined
# (inlined frames are named after the one they sit in).
function flush() {
	if (inloop && self != "") {
		n[self]++
		total++
	}
	self = ""; inloop = 0
}
/^$/ { flush(); next }
{
	sym = $2
	inl = ($0 ~ /\(inlined\)/)
	if (sym == "path_ns")
		inloop = 1
	if (self == "" && !inl)
		self = sym
}
END {
	flush()
	if (!total) {
		print "no samples in the loop"
		exit 1
	}
	printf "%d samples in the loop\n", total
	for (s in n)
		printf "%6.2f%%  %s\n", 100 * n[s] / total, s | \
		    "sort -rn | head -n " top
}
