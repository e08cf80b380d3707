#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of `buddyctl profile --cuda=driver` and libbuddycudaprof.so, the
# interposer of the CUDA driver API, on a fake libcuda.so.1 (host memory:
# selftests/profile/fake_libcuda.c) and the program cuda_driver_prog.c,
# which reaches the driver the CUDA runtime's way (cuGetProcAddress_v2),
# by dlsym, by the linker and by dlsym(RTLD_NEXT).  TAP on stdout.
#
#   cuda_driver_test.sh BUDDYCTL LIBBUDDYCUDAPROF TESTDIR
#
# TESTDIR holds cuda_driver_prog and fake-cuda/libcuda.so.1.
set -u
BUDDYCTL=$(realpath "$1")
LIB=$(realpath "$2")
PROGS=$(realpath "$3")
PY=${PYTHON:-python3}
export BUDDYCTL
export BUDDYCUDA_LIB=$LIB
export LD_LIBRARY_PATH=$PROGS/fake-cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

. "$(dirname "$(realpath "$0")")/../lib/tap.sh"
tap_init cuda-driver-test
W=$T
PROG=$PROGS/cuda_driver_prog

# The records of a run (DIR/rec), its manifest (DIR/manifest.tsv) and the
# JSON report, checked by the Python statements $2 (d: the report; recs:
# pid -> records; man: the manifest's rows; parent, child: the pids).
pyr() {
	$PY - "$1" <<EOF
import glob, json, os, sys
D = sys.argv[1]
d = json.load(open(D + "/report.json"))
recs = {}
for p in glob.glob(D + "/rec/cuda-*.tsv"):
    r = {"snaps": [], "labels": {}, "notes": [], "proc": None}
    for line in open(p):
        f = line.rstrip("\n").split("\t")
        if f[0] == "proc":
            r["proc"] = f
        elif f[0] == "label":
            r["labels"][f[1]] = f[3]
        elif f[0] == "note":
            r["notes"].append(f[1])
        elif f[0] == "snap":
            r["snaps"].append({"segs": [], "blks": []})
        elif f[0] == "seg":
            r["snaps"][-1]["segs"].append(f)
        elif f[0] == "blk":
            r["snaps"][-1]["blks"].append(f)
    recs[int(r["proc"][1])] = r
man = []
for line in open(D + "/manifest.tsv"):
    pid, name, call, size, fn, snaps = line.rstrip("\n").split("\t")
    man.append({"pid": int(pid), "name": name, "call": call,
                "size": int(size), "fn": fn,
                "snaps": [int(x) for x in snaps.split(",")]})
parent = min(m["pid"] for m in man if m["name"] != "child")
child = [m["pid"] for m in man if m["name"] == "child"][0]
$2
EOF
}

# --- a run with every allocation path ------------------------------------------
R=$W/run
mkdir -p "$R"
FAKE_CUDA_LOG=$R/plain.log "$PROG" "$R" >"$W/plain.out" 2>&1
check "the program runs alone on the fake driver" grep -q done "$W/plain.out"
rm -f "$R"/*.bin "$R"/manifest.tsv
FAKE_CUDA_LOG=$R/fake.log "$BUDDYCTL" profile -q --cuda=driver --no-timer \
	--cuda-records "$R/rec" -j -o "$R/report.json" -- "$PROG" "$R" \
	>"$W/prof.out" 2>"$W/prof.err"
rc=$?
check "under --cuda=driver it exits 0" test $rc -eq 0
check "its output is the same with the interposer" cmp "$W/plain.out" "$W/prof.out"
check "every allocation path is seen: count and bytes per call, at the first snapshot" pyr "$R" '
for pid in (parent, child):
    want, got = {}, {}
    for m in man:
        if m["pid"] == pid and 0 in m["snaps"]:
            c = want.setdefault(m["call"], [0, 0]); c[0] += 1; c[1] += m["size"]
    for g in recs[pid]["snaps"][0]["segs"]:
        c = got.setdefault(g[8], [0, 0]); c[0] += 1; c[1] += int(g[5])
    assert want == got, (pid, want, got)
assert len({m["call"] for m in man}) == 6
'
check "no copy spans two allocations: the fake driver counted no failed copy" \
	sh -c "test \$(grep -c 'spans 0 errors 0' '$R/fake.log') -eq 2 &&
	       ! grep -q 'copy failed' '$R'/rec/*.tsv"
check "freed allocations (cuMemFree, cuMemFreeAsync, cuMemUnmap) are not in the later snapshot" pyr "$R" '
s = recs[parent]["snaps"]
assert len(s) == 2, len(s)
later = sorted((g[8], int(g[5])) for g in s[1]["segs"])
want = sorted((m["call"], m["size"]) for m in man
              if m["pid"] == parent and 1 in m["snaps"])
assert later == want, (later, want)
assert len(s[0]["segs"]) - len(s[1]["segs"]) == 3
'
check "labels name the program's call sites" pyr "$R" '
for pid, r in recs.items():
    for g, b in zip(r["snaps"][0]["segs"], r["snaps"][0]["blks"]):
        fns = {m["fn"] for m in man if m["pid"] == pid and
               m["size"] == int(g[5]) and m["call"] == g[8]}
        site = r["labels"][b[7]]
        assert site.startswith("cuda_driver_prog+0x"), site
        assert site.split()[-1] in fns, (site, fns)
'
check "the child has a record file of its own, with its allocation only" pyr "$R" '
assert sorted(recs) == sorted([parent, child]), (sorted(recs), parent, child)
assert int(recs[child]["proc"][2]) == parent
segs = recs[child]["snaps"][0]["segs"]
assert len(segs) == 1 and segs[0][8] == "cuMemAlloc" and int(segs[0][5]) == 1 << 20
'
# The report's Fig. 3 ratio of each snapshot against buddyctl analyze of
# the bytes the program wrote (its own copies, not the device's).
check "the report's Fig. 3 ratio per snapshot is buddyctl analyze's of the same data (within 0.01)" pyr "$R" '
import subprocess
bc = os.environ["BUDDYCTL"]
assert d["cuda"]["source"] == "driver"
n = 0
for p in d["processes"]:
    pid = p["pid"]
    for s in p["snapshots"]:
        k = s["index"]
        if k < 0:
            continue    # a snapshot of another process
        files = [D + "/" + m["name"] + ".bin" for m in man
                 if m["pid"] == pid and k in m["snaps"]]
        a = json.loads(subprocess.run([bc, "analyze", "--json"] + files,
                       capture_output=True, check=True).stdout)
        want = [c for c in a["codecs"] if c["codec"] == "bpc"][0]["ratio_fig3"]
        assert abs(s["fig3"] - want) <= 0.01, (pid, k, s["fig3"], want)
        n += 1
assert n == 3, n
'
mkdir -p "$W/txt"
"$BUDDYCTL" profile -q --cuda=driver --no-timer -o "$W/text.out" -- \
	"$PROG" "$W/txt" >/dev/null 2>&1
check "the text report names the driver interposer and warns of no CPU time the records lack" \
	sh -c "grep -q 'cuda: the driver API.s allocations' '$W/text.out' &&
	       ! grep -q 'reach only the first' '$W/text.out'"
check "the end record counts every allocation call" pyr "$R" '
for pid in (parent, child):
    ends = [l for l in open(D + "/rec/cuda-%d.tsv" % pid) if l.startswith("end\t")]
    assert len(ends) == 1
    assert int(ends[0].split("\t")[3]) == sum(1 for m in man if m["pid"] == pid)
'

# --- the timer, and a driver whose copies fail ----------------------------------
R2=$W/timer
mkdir -p "$R2"
"$BUDDYCTL" profile -q --cuda=driver --first 100ms --points 3 \
	--cuda-records "$R2/rec" -j -o "$R2/report.json" -- "$PROG" "$R2" 1200 \
	>/dev/null 2>"$W/timer.err"
check "the timer takes snapshots while the program runs, thinned to --points" pyr "$R2" '
f = open(D + "/rec/cuda-%d.tsv" % parent).read()
snaps = f.count("\nsnap\t")
end = [l for l in f.splitlines() if l.startswith("end\t")][0].split("\t")
kept = end[5].split(",")
assert snaps >= 6, snaps
assert len(kept) <= 3 + 2, kept
assert f.count("\ndrop\t") == snaps - len(kept), (snaps, kept)
'
# The timer every millisecond while the program allocates and frees: a
# copy of memory freed under it would fail in the fake driver.
bad=0
for i in 1 2 3 4 5; do
	R4=$W/race$i
	mkdir -p "$R4"
	FAKE_CUDA_LOG=$R4/fake.log "$BUDDYCTL" profile -q --cuda=driver \
		--first 1ms --points 50 -o /dev/null -- "$PROG" "$R4" \
		>/dev/null 2>&1 || bad=$((bad + 1))
	[ "$(grep -c 'spans 0 errors 0' "$R4/fake.log")" = 2 ] || bad=$((bad + 1))
done
check "snapshots on a 1 ms timer beside the program's frees never read freed memory (5 runs)" \
	test $bad -eq 0
R3=$W/fail
mkdir -p "$R3"
FAKE_CUDA_FAIL_DTOH=1 "$BUDDYCTL" profile -q --cuda=driver --no-timer \
	--cuda-records "$R3/rec" -o /dev/null -- "$PROG" "$R3" \
	>"$W/fail.out" 2>"$W/fail.err"
rc=$?
check "copies that fail: the program runs on and exits 0, a note says so" \
	sh -c "test $rc -eq 0 && cmp -s '$W/plain.out' '$W/fail.out' &&
	       grep -q 'a copy failed' '$R3'/rec/cuda-*.tsv"

# --- the command line and the library ---------------------------------------------
tap_run 2 "--cuda=bogus is refused" "$BUDDYCTL" profile --cuda=bogus -- true
err_has "its message names the option and the values" "--cuda: bogus is not torch or driver"
tap_run 2 "--every-backward is --cuda=torch's" "$BUDDYCTL" profile --cuda=driver \
	--every-backward 2 -- true
err_has "its message says so" "only with --cuda=torch"
tap_run 0 "--cuda=driver on a program that makes no CUDA allocation" \
	"$BUDDYCTL" profile -q --cuda=driver -o /dev/null -- true
err_has "its empty report says why" "no process of true allocated through the CUDA driver API"
check "libbuddycudaprof.so needs glibc only" sh -c "
	readelf -d '$LIB' | grep NEEDED |
	grep -v -e 'libc\.so' -e 'libm\.so' -e 'libdl\.so' -e 'libpthread\.so' \
		-e 'ld-linux' | { ! grep .; }"
check "it exports the driver calls, dlsym and buddy_cuda_snapshot only" sh -c "
	nm -D --defined-only '$LIB' | awk '{print \$3}' |
	grep -v -e '^cuMem' -e '^cuGetProcAddress' -e '^dlsym\$' \
		-e '^buddy_cuda_snapshot\$' | { ! grep .; }"

tap_end
