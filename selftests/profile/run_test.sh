#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end tests of `buddyctl run` natively, on the in-process device
# (no kernel module, no QEMU; that device has no mmap, so the program runs
# in ordinary memory accounted through the device: the window and the
# fork copy are tested in the guest, selftests/tools/buddyctl-run-guest.sh).
# TAP on stdout, closing "# Totals:" line.
#
#   run_test.sh BUDDYCTL LIBBUDDYPROF TESTDIR
#
# PYSITES=no: the interposer was built without Python sites (no CPython
# 3.11 headers), their check is skipped.
set -u
BUDDYCTL=$(realpath "$1")
LIB=$(realpath "$2")
PROGS=$(realpath "$3")
HERE=$(dirname "$(realpath "$0")")
export BUDDYPROF_LIB=$LIB
PY=/usr/bin/python3

. "$(dirname "$(realpath "$0")")/../lib/tap.sh"
tap_init run-test
W=$T
# pyj FILE 'python statements' with d = the JSON, lab(size) = its labels
pyj() {
	$PY - "$1" <<EOF
import json, sys
d = json.load(open(sys.argv[1]))
t = d["total"]
def lab(size):
    return [l for l in d["labels"] if l["logical"] + l["fallback_bytes"] == size]
$2
EOF
}
run() { "$BUDDYCTL" run -q "$@"; }
DEV=inproc:device_mb=64
MiB=1048576

cd "$PROGS"
./runprog all >"$W/plain.out" 2>"$W/plain.err"
check "runprog passes its own checks in ordinary memory" test $? -eq 0

# --- everything in buddy memory, 4x ------------------------------------------------
run --device $DEV -t 4x --labels 0 --json-out "$W/a.json" -o "$W/a.rep" -- ./runprog all \
	>"$W/a.out" 2>"$W/a.err"
check "4x: exits 0 (every malloc/calloc/realloc/memalign/mmap check passed)" \
	test $? -eq 0
check "4x: the program's output is identical to the ordinary run" \
	cmp "$W/plain.out" "$W/a.out"
check "4x: 17 buddy allocations from 2 processes (the exec'd one followed), none fell back" \
	pyj "$W/a.json" 'assert t["nallocs"] == 17 and t["nfallback"] == 0, t
assert d["nr_procs"] == 2, d["nr_procs"]
assert t["logical"] == (4*3 + 4*3 + 2 + 6 + 3 + 2*4 + 3 + 5 + 8) * 2**20 + 2*2**20 + 1, t["logical"]'
check "4x: one call site in a loop is one label of 3 allocations; a forked child's own allocation is counted" \
	pyj "$W/a.json" 'assert any(l["nallocs"] == 3 and l["logical"] == 12 * 2**20 for l in d["labels"]), d["labels"]
assert len(lab(2 * 2**20 + 1)) == 1, "fork child"
assert d["nr_forks"] == 2, d["nr_forks"]'
check "4x: labels are named as profile names them (bp- and 12 hex digits)" \
	pyj "$W/a.json" 'import re
assert all(re.fullmatch("bp-[0-9a-f]{12}", l["label"]) for l in d["labels"])'
check "4x: device bytes are about a quarter of logical (expansion 3.9-4), buddy bytes the rest" \
	pyj "$W/a.json" 'assert 3.9 <= t["expansion"] <= 4.0, t["expansion"]
assert t["buddy"] >= 2.9 * t["device"], t'
check "4x: link bytes = buddy sectors * 32, buddy-access fraction and link time reported" \
	pyj "$W/a.json" 'assert t["link_bytes"] == 32 * t["bud_sectors"] and t["bud_sectors"] > 0
assert 0 < t["buddy_acc"] <= t["entries"] and t["link_ns"] > 0, t'
check "4x: link requests (a stripe touching buddy sectors pays the latency once) are fewer than buddy accesses" \
	pyj "$W/a.json" 'assert 0 < t["link_req"] < t["buddy_acc"], t
assert sum(l["link_req"] for l in d["labels"]) == t["link_req"], t'
check "4x: the sweep: 50/100/150/200/16 GB/s, link time falling with bandwidth, 150 GB/s = ALLOC_STAT's link_ns" \
	pyj "$W/a.json" 's = d["sweep"]
assert [x["gbps"] for x in s] == [50, 100, 150, 200, 16], s
ns = [x["link_ns"] for x in s]
assert ns[0] > ns[1] > ns[2] > ns[3] and ns[4] > ns[0], ns
assert abs(ns[2] - t["link_ns"]) <= t["nallocs"] * 2 + 1, (ns[2], t["link_ns"])'
check "4x: the text report has the per-label table, the total and the sweep" \
	sh -c "grep -q '^label .*expand .*faults .*hits .*wbacks .*bud%' '$W/a.rep' &&
	       grep -q '^total ' '$W/a.rep' && grep -q '16 GB/s PCIe' '$W/a.rep' &&
	       grep -q 'without mmap' '$W/a.rep'"

run --device $DEV -t 4x --base-time 2 --json-out "$W/b.json" -o /dev/null -- ./runprog noexec \
	>/dev/null 2>&1
check "--base-time 2: slowdown = (2 s + modeled link time) / 2 s" \
	pyj "$W/b.json" 'for x in d["sweep"]:
    assert abs(x["slowdown"] - (2 + x["link_ns"] / 1e9) / 2) < 1e-9, x'

# --- 1x: no compression ------------------------------------------------------------
run --device $DEV -t 1x --json-out "$W/c.json" -o /dev/null -- ./runprog noexec >/dev/null 2>&1
check "1x: device bytes >= logical, no buddy bytes, no buddy accesses" \
	pyj "$W/c.json" 'assert t["device"] >= t["logical"] and t["buddy"] == 0 and t["buddy_acc"] == 0, t'

# --- a pool smaller than the footprint: fallback ---------------------------------
run --device inproc:device_mb=4,max_ratio=2 -t 2x --allow-fallback --json-out "$W/f.json" -o "$W/f.rep" \
	-- ./runprog all >"$W/f.out" 2>/dev/null
check "small pool: exits 0 with identical output" \
	sh -c "test $? -eq 0 && cmp '$W/plain.out' '$W/f.out'"
check "small pool: what did not fit fell back to ordinary memory, counted with ENOSPC or E2BIG, the rest is buddy" \
	pyj "$W/f.json" 'assert t["nfallback"] > 0 and t["nallocs"] > 0, t
assert t["nfallback"] + t["nallocs"] == 17, t
assert all(l.get("fallback_errno", 28) in (28, 7) for l in d["labels"]), d["labels"]'

# --- --min-size --------------------------------------------------------------------
run --device $DEV --min-size 8M --json-out "$W/m.json" -o /dev/null -- ./runprog all \
	>/dev/null 2>&1
check "--min-size 8M: only the 8 MiB allocation is buddy, the others counted below it" \
	pyj "$W/m.json" 'assert t["nallocs"] == 1 and t["logical"] == 8 * 2**20, t
assert d["nr_small"] >= 12, d["nr_small"]'

# --- the same labels as profile: a profile file picks targets ---------------
"$BUDDYCTL" profile -q --every-allocs 1 -m 1M -p "$W/p.prof" -o /dev/null -- \
	./runprog noexec >/dev/null 2>&1
$PY - "$W/p.prof" "$W/p2.prof" <<'EOF'
import sys
# every label of the profile gets 2x: a target the run would not pick itself
out = []
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    f = line.rstrip("\n").split("\t")
    f[2] = "2x"
    out.append("\t".join(f))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
run --device $DEV -t 4x -p "$W/p2.prof" --json-out "$W/p.json" -o /dev/null -- ./runprog noexec \
	>/dev/null 2>&1
check "-p: every label of profile's file is one of run's, and gets its target (2x)" \
	$PY - "$W/p2.prof" "$W/p.json" <<'EOF'
import json, sys
want = {l.split("\t")[1] for l in open(sys.argv[1]) if l.strip()}
d = json.load(open(sys.argv[2]))
got = {l["label"]: l for l in d["labels"]}
assert len(want) >= 10, want
missing = want - set(got)
assert not missing, ("labels profile saw but run did not", missing, sorted(got))
for w in want:
    assert got[w]["from_profile"] and got[w]["target"] == "2x", got[w]
others = [l for l in d["labels"] if l["label"] not in want]
assert all(l["target"] == "4x" and not l["from_profile"] for l in others), others
EOF

# --- a Python program: profile's Python sites label run's allocations too ---
if [ "${PYSITES:-yes}" = yes ]; then
	PYS=$HERE/pysites.py
	"$BUDDYCTL" profile -q --no-timer -m 16M -j -o "$W/py.json" -p "$W/py.prof" -- \
		$PY "$PYS" >/dev/null 2>&1
	# every label gets 2x, a target run would not pick itself
	$PY -c 'import sys
for l in open(sys.argv[1]):
    f = l.split("\t")
    if len(f) == 4 and not l.startswith("#"):
        print("\t".join(f[:2] + ["2x"] + f[3:]), end="")' "$W/py.prof" >"$W/py2.prof"
	run --device inproc:device_mb=256 -m 16M -t 4x -p "$W/py2.prof" \
		--json-out "$W/pyr.json" -o /dev/null -- $PY "$PYS" >/dev/null 2>&1
	check "python: the two labels profile names by Python line are run's, with the profile's target" \
		$PY - "$W/py.json" "$W/pyr.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
want = {l["label"] for l in p["labels"] if l["site"].startswith("pysites.py:")}
assert len(want) == 2, [l["site"] for l in p["labels"]]
got = {l["label"]: l for l in json.load(open(sys.argv[2]))["labels"]}
for w in want:
    assert w in got and got[w]["from_profile"] and got[w]["target"] == "2x", (w, sorted(got))
EOF
else
	skp "python: profile's Python sites label run's allocations" "the interposer was built without CPython 3.11's internal headers"
fi

# --- usage and runtime errors --------------------------------------------------------
"$BUDDYCTL" run --min-size 0 -- true >/dev/null 2>"$W/e1"
check "--min-size 0: exit 2, naming the option" \
	sh -c "test $? -eq 2 && grep -q -- '--min-size' '$W/e1'"
"$BUDDYCTL" run --target 3x -- true >/dev/null 2>"$W/e2"
check "--target 3x: exit 2, naming the option" \
	sh -c "test $? -eq 2 && grep -q -- '--target' '$W/e2'"
"$BUDDYCTL" run --device $DEV >/dev/null 2>"$W/e3"
check "no command: exit 2" sh -c "test $? -eq 2 && grep -q 'no command' '$W/e3'"
"$BUDDYCTL" run -p "$W/nonexistent" -- true >/dev/null 2>"$W/e4"
check "-p of a missing file: exit 1, naming the file" \
	sh -c "test $? -eq 1 && grep -q 'nonexistent' '$W/e4'"
printf '0\tx\t5x\tbpc\n' >"$W/bad.prof"
"$BUDDYCTL" run -p "$W/bad.prof" -- true >/dev/null 2>"$W/e5"
check "-p of a bad file: exit 1, naming file and line" \
	sh -c "test $? -eq 1 && grep -q 'bad.prof:1:' '$W/e5'"
"$BUDDYCTL" run --cpunodebind 1023 --device $DEV -- true >/dev/null 2>"$W/e6"
rc=$?
check "--cpunodebind past the last node: exit 2 (or 1 without NUMA), naming the option" \
	sh -c "test $rc -eq 2 -o $rc -eq 1 && grep -q -- '--cpunodebind' '$W/e6'"
run --device $DEV --cpunodebind 0 -o /dev/null -- sh -c 'exit 3' >/dev/null 2>"$W/e7"
rc=$?
if grep -q 'no NUMA support' "$W/e7"; then
	skp "--cpunodebind 0 runs the program" "no NUMA support"
else
	check "--cpunodebind 0 runs the program; its exit status is buddyctl's" test $rc -eq 3
fi
run --device $DEV -o "$W/term.rep" -- sh -c 'kill -TERM $$' >/dev/null 2>&1
check "a program killed by SIGTERM: exit 143" test $? -eq 143
check "... and the report names the signal" \
	grep -q "^buddyctl run: sh, .*, killed by SIGTERM (exit status 143)$" "$W/term.rep"
run --device $DEV -o /dev/null -- "$W/no-such-program" >/dev/null 2>"$W/e8"
check "a missing program: exit 127, naming it" \
	sh -c "test $? -eq 127 && grep -q 'no-such-program' '$W/e8'"
run --device inproc:device_mb=0 --json-out "$W/d.json" -o /dev/null -- ./runprog noexec \
	>/dev/null 2>&1
check "a device that cannot be opened: the program still runs, everything falls back, counted" \
	pyj "$W/d.json" 'assert t["nallocs"] == 0 and t["nfallback"] == 15, t
assert d["nr_dev_open_failed"] >= 1, d'

# --- programs nobody tuned run for (hpcprog) ------------------------------------
./hpcprog aligned >"$W/al-plain.out"
run --device $DEV -t 4x --json-out "$W/al.json" -o "$W/al.rep" -- ./hpcprog aligned \
	>"$W/al.out" 2>/dev/null
check "aligned 64K..2M (posix_memalign, aligned_alloc, memalign): exits 0, output identical" \
	sh -c "test $? -eq 0 && test -s '$W/al-plain.out' && cmp '$W/al-plain.out' '$W/al.out'"
check "aligned 64K..2M: every one is a buddy allocation, none fell back" \
	pyj "$W/al.json" 'assert t["nallocs"] == 4 and t["nfallback"] == 0, t
assert t["logical"] == (4 + 8 + 2 + 3) * 2**20 + 4096, t["logical"]'

run --device inproc:device_mb=1 -t 4x --json-out "$W/fb.json" -o "$W/fb.rep" -- \
	./hpcprog churn 3 8 >/dev/null 2>&1
check "all fell back on the in-process device: the text says in-process" \
	grep -q 'device without mmap (in-process)' "$W/fb.rep"
check "all fell back on the in-process device: JSON native true" \
	pyj "$W/fb.json" 'assert d["native"] is True and t["nallocs"] == 0, d'
check "every fallback reason with its count and bytes, in the text" \
	grep -q '^  E2BIG (larger than the device takes): 3 allocation(s), 24.0 MiB' "$W/fb.rep"
check "every fallback reason with its count and bytes, in the JSON" \
	pyj "$W/fb.json" 'assert d["fallbacks"] == [{"errno": 7, "name": "E2BIG", "allocs": 3, "bytes": 24 * 2**20}], d["fallbacks"]'

run --device inproc:device_mb=8 -t 1x --json-out "$W/ch.json" -o "$W/ch.rep" -- \
	./hpcprog churn 10 4 >/dev/null 2>&1
check "churn 10 x 4 MiB: the footprint is the peak of live bytes (4 MiB), not the 40 MiB allocated" \
	pyj "$W/ch.json" 'assert t["logical"] == 40 * 2**20 and t["nfallback"] == 0, t
assert d["peak_live_bytes"] == 4 * 2**20, d["peak_live_bytes"]
b = d["baselines"]
assert b["footprint"] == 4 * 2**20 and b["overflow"] == 0, b'
check "churn: the text report says footprint = peak live bytes" \
	grep -q '^footprint: at most 4.0 MiB of buddy memory live at one time (40.0 MiB allocated in all)' "$W/ch.rep"

check "no base time: the report says so instead of a slowdown near 1.000x" \
	grep -q '^no slowdown: no base time' "$W/ch.rep"
check "no base time: no slowdown in the JSON sweep" \
	pyj "$W/ch.json" 'assert d["base"] == "none" and d["base_s"] is None
assert all("slowdown" not in x for x in d["sweep"]), d["sweep"]'
run --device inproc:device_mb=8 -t 1x --base-run --json-out "$W/br.json" -o "$W/br.rep" -- \
	./hpcprog churn 10 4 >"$W/br.out" 2>/dev/null
check "--base-run: the program's output once (the plain run's is thrown away)" \
	test "$(grep -c '^churn' "$W/br.out")" -eq 10
check "--base-run: the report says the base is a plain run" \
	grep -q '^slowdown against a base time of .* (of a plain run)' "$W/br.rep"
check "--base-run: slowdown = (plain run + modeled link time) / plain run" \
	pyj "$W/br.json" 'assert d["base"] == "plain run" and d["base_s"] > 0
for x in d["sweep"]:
    assert abs(x["slowdown"] - (d["base_s"] + x["link_ns"] / 1e9) / d["base_s"]) < 1e-9, x'
"$BUDDYCTL" run --device $DEV --base-run -o "$W/bf.rep" -- sh -c 'exit 4' >/dev/null 2>"$W/bf.err"
check "--base-run of a failing command: said, no base, the run's own status" \
	sh -c "test $? -eq 4 && grep -q 'base-run: the plain run of sh exited with 4: no base time' '$W/bf.err' &&
	       grep -q '^no slowdown' '$W/bf.rep'"
"$BUDDYCTL" run --device $DEV --progress 0.1 -o /dev/null -- ./hpcprog upfront 40 8 \
	>/dev/null 2>"$W/pr.err"
check "--progress 0.1: progress lines on stderr with the live and peak buddy memory" \
	grep -q 'run: [0-9]* s: 16.0 MiB of buddy memory live (peak 16.0 MiB)' "$W/pr.err"
"$BUDDYCTL" run --progress -1 -- true >/dev/null 2>"$W/e9"
check "--progress -1: exit 2, naming the option" \
	sh -c "test $? -eq 2 && grep -q -- '--progress' '$W/e9'"

# --- the device is checked before the program runs ---------------------------
rm -f "$W/ran"
"$BUDDYCTL" run -q --device "$W/no-buddy" -- touch "$W/ran" >/dev/null 2>"$W/nd.err"
rc=$?
check "no device: exit 1 and the program never started" \
	sh -c "test $rc -eq 1 && test ! -e '$W/ran'"
check "no device: the message names the path, modprobe buddy and --device inproc:" \
	sh -c "grep -q '$W/no-buddy' '$W/nd.err' && grep -q 'modprobe buddy' '$W/nd.err' &&
	       grep -q 'inproc:' '$W/nd.err'"
BUDDY_DEVICE="$W/no-buddy" "$BUDDYCTL" run -q -- touch "$W/ran" >/dev/null 2>"$W/nd2.err"
check "no device named by \$BUDDY_DEVICE: exit 1, nothing run" \
	sh -c "test $? -eq 1 && test ! -e '$W/ran' && grep -q 'no-buddy' '$W/nd2.err'"
"$BUDDYCTL" run -q --device /dev/null -- touch "$W/ran" >/dev/null 2>"$W/nd3.err"
check "a file that is not a buddy device: exit 1, nothing run, said so" \
	sh -c "test $? -eq 1 && test ! -e '$W/ran' && grep -q 'not a buddy device' '$W/nd3.err'"
check "the in-process device: the report's first line says the program ran in ordinary memory" \
	sh -c "grep -m1 . '$W/a.rep' | grep -q 'in ordinary memory'"
run --device inproc:device_mb=2,max_ratio=2 -t 2x -o /dev/null -- ./runprog noexec \
	>/dev/null 2>"$W/fb.err"
check "more than half the tracked bytes fell back: a warning, exit 1" \
	sh -c "test $? -eq 1 && grep -q 'warning: .*fell back' '$W/fb.err' &&
	       grep -q -- '--allow-fallback' '$W/fb.err'"
run --device inproc:device_mb=2,max_ratio=2 -t 2x --allow-fallback -o /dev/null -- \
	./runprog noexec >/dev/null 2>"$W/fb2.err"
check "--allow-fallback: the same run exits with the program's status, still warned" \
	sh -c "test $? -eq 0 && grep -q 'warning: .*fell back' '$W/fb2.err'"

# --- JSON alone on stdout -------------------------------------------------------------
run --device $DEV -j -- ./runprog noexec >"$W/j.out" 2>"$W/j.err"
check "-j: stdout is the JSON report alone (the program's stdout went to stderr)" \
	sh -c "$PY -m json.tool '$W/j.out' >/dev/null && grep -q '^a ' '$W/j.err'"
check "-j: the same report as --json-out" \
	pyj "$W/j.out" 'assert "sweep" in d and t["nallocs"] > 0 and d["labels"], t'
run --device $DEV --json-out - -- ./runprog noexec >"$W/j2.out" 2>"$W/j2.err"
check "--json-out -: JSON alone on stdout, the text report and the program's stdout on stderr" \
	sh -c "$PY -m json.tool '$W/j2.out' >/dev/null && grep -q '^a ' '$W/j2.err' &&
	       grep -q '^total ' '$W/j2.err'"
run --device $DEV -j -o "$W/j3.json" -- ./runprog noexec >"$W/j3.out" 2>/dev/null
check "-j -o FILE: the JSON in FILE, the program's stdout left on stdout" \
	sh -c "$PY -m json.tool '$W/j3.json' >/dev/null && grep -q '^a ' '$W/j3.out'"

# --- a real program: numpy -----------------------------------------------------------
if $PY -c 'import numpy' 2>/dev/null; then
	cat >"$W/np.py" <<'EOF'
import hashlib, numpy as np
rng = np.random.default_rng(7)
a = rng.integers(0, 100, size=(512, 512)).astype(np.float64)
b = a @ a.T + np.arange(512.0)
c = np.sort(b.ravel())
print(hashlib.sha256(b.tobytes()).hexdigest(), hashlib.sha256(c.tobytes()).hexdigest())
EOF
	OPENBLAS_NUM_THREADS=1 $PY "$W/np.py" >"$W/np1.out"
	OPENBLAS_NUM_THREADS=1 run --device inproc:device_mb=4,max_ratio=4 -t 4x --json-out \
		"$W/np.json" -o /dev/null -- $PY "$W/np.py" >"$W/np2.out" 2>/dev/null
	check "numpy: bit-identical results in buddy memory with a pool smaller than its footprint" \
		sh -c "test -s '$W/np1.out' && cmp '$W/np1.out' '$W/np2.out'"
	check "numpy: its arrays were buddy allocations, some fell back" \
		pyj "$W/np.json" 'assert t["nallocs"] >= 2 and t["nfallback"] >= 1, t'
else
	skp "numpy: bit-identical results" "no numpy for $PY"
	skp "numpy: buddy allocations" "no numpy for $PY"
fi

tap_end
