#!/bin/sh
# Sum every "# Totals:" line (kselftest harness) and every "passed/failed"
# result file under build/results into one closing line.
out=${RESULTS:-build/results}
cat "$out"/*.log 2>/dev/null | awk '
/^# Totals: pass:/ {
	split($0, f, /[: ]+/)
	for (i = 1; i <= length(f); i++) {
		if (f[i] == "pass") p += f[i + 1]
		if (f[i] == "fail" || f[i] == "error") x += f[i + 1]
		if (f[i] == "skip") s += f[i + 1]
	}
}
END { printf "%d passed, %d failed, %d skipped\n", p, x, s; exit (x > 0) }'
