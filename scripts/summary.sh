#!/bin/sh
# Sum every "# Totals:" line (kselftest harness) of the result files under
# build/results into one closing line "N passed, N failed, N skipped"; exit 1
# when anything failed.
#
# Inside a stage of `make check` (scripts/stage.sh sets STAGE_BEFORE to a
# list of the result files, with their checksums, that existed before the
# stage began), only the files the stage itself wrote or rewrote count: a
# stage that ends with this summary fails for its own tests, never for an
# earlier stage's, so one failure is counted once.
out=${RESULTS:-build/results}
files() {
	for f in "$out"/*.log; do
		[ -f "$f" ] || continue
		if [ -n "${STAGE_BEFORE:-}" ] && [ -f "$STAGE_BEFORE" ] &&
		   grep -qxF "$(cksum "$f")" "$STAGE_BEFORE"; then
			continue
		fi
		cat "$f"
	done
}
files | awk '
/^# Totals: pass:/ {
	split($0, f, /[: ]+/)
	for (i = 1; i <= length(f); i++) {
		if (f[i] == "pass") p += f[i + 1]
		if (f[i] == "fail" || f[i] == "error") x += f[i + 1]
		if (f[i] == "skip") s += f[i + 1]
	}
}
END { printf "%d passed, %d failed, %d skipped\n", p, x, s; exit (x > 0) }'
