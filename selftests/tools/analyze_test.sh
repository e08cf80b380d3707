#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of "buddyctl analyze" against an independent size model
# (codec_model.py, written from shared/spec/bpc.md).  TAP-ish output ending in
# a kselftest "# Totals:" line, for scripts/summary.sh.
#
#   selftests/tools/analyze_test.sh [path/to/buddyctl]
#
# Needs python3 (plain; only json, random, struct): without it the tests that
# need it say SKIP with the reason.

BUDDYCTL=${1:-build/buddyctl}
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="$HERE/codec_model.py"
PY=${PYTHON:-python3}

. "$HERE/../lib/tap.sh"
tap_init analyze_test
if [ ! -x "$BUDDYCTL" ]; then
	echo "# $BUDDYCTL: not built"
	echo "not ok 1 - buddyctl exists"
	echo "1..1"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
have_py=1
command -v "$PY" >/dev/null 2>&1 || have_py=0
NOPY="python3 not found"

# expect_rc DESC RC CMD...: run CMD (stdout/stderr to $T/out, $T/err).
expect_rc() {
	d=$1 want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$d"; else
		nok "$d"; echo "# exit $got, expected $want"; diag "$T/err"
	fi
}

# same DESC FILE1 FILE2: the two files are byte-identical.
same() {
	if cmp -s "$2" "$3"; then ok "$1"; else
		nok "$1"; diff "$2" "$3" | diag
	fi
}

# --- command table -----------------------------------------------------------
expect_rc "buddyctl --help exits 0" 0 "$BUDDYCTL" --help
check "buddyctl --help lists analyze" grep -q '^  analyze ' "$T/out"
expect_rc "buddyctl --version exits 0" 0 "$BUDDYCTL" --version
check "buddyctl --version prints a version" grep -q '^buddyctl [0-9]' "$T/out"
expect_rc "buddyctl analyze --help exits 0" 0 "$BUDDYCTL" analyze --help
expect_rc "unknown command exits 2" 2 "$BUDDYCTL" no-such-command
expect_rc "no command exits 2" 2 "$BUDDYCTL"

# --- BPC test vectors T1..T11 of the spec --------------------------------------
if [ $have_py = 1 ]; then
	"$PY" "$MODEL" vectors "$T/vec.bin"
	printf '%s\n' 10 15 14 109 20 26 40 15 86 20 25 >"$T/vec.want"
	"$BUDDYCTL" analyze --per-entry "$T/vec.bin" >"$T/vec.got" 2>"$T/err"
	same "per-entry bpc (default) of T1..T11 is 10,15,14,109,20,26,40,15,86,20,25" \
		"$T/vec.want" "$T/vec.got"
	check "per-entry of whole entries writes nothing to stderr" \
		test ! -s "$T/err"
	"$PY" "$MODEL" bits bpc "$T/vec.bin" >"$T/vec.model"
	same "model agrees with the spec's vector sizes" "$T/vec.want" \
		"$T/vec.model"
	# All-zero entry (T1): every codec's size, no raw/zero shortcut.
	for cb in bpc:10 zvc:32 bdi:12 fpc:24 none:1024; do
		c=${cb%:*} b=${cb#*:}
		got=$(head -c 128 "$T/vec.bin" | "$BUDDYCTL" analyze -e -c "$c" -)
		check "per-entry $c of an all-zero entry is $b" test "$got" = "$b"
	done
else
	skp "test vectors" "$NOPY"
fi

# --- every codec against the model, on entries of many kinds -----------------
if [ $have_py = 1 ]; then
	"$PY" "$MODEL" varied "$T/var.bin" 3000 7
	for c in bpc zvc bdi fpc none; do
		"$PY" "$MODEL" bits "$c" "$T/var.bin" >"$T/m.$c"
		"$BUDDYCTL" analyze --per-entry --codec "$c" "$T/var.bin" \
			>"$T/c.$c"
		same "per-entry $c of 3000 varied entries equals the model" \
			"$T/m.$c" "$T/c.$c"
	done
	for c in zvc bdi fpc; do
		"$PY" "$MODEL" bits "$c" "$T/vec.bin" >"$T/m.$c"
		"$BUDDYCTL" analyze -e -c "$c" "$T/vec.bin" >"$T/c.$c"
		same "per-entry $c of T1..T11 equals the model" "$T/m.$c" "$T/c.$c"
	done

	# Several files, in order, across 1 MiB read buffers, padded tail.
	head -c 200 "$T/var.bin" >"$T/tail.bin"
	cat "$T/var.bin" "$T/var.bin" "$T/var.bin" "$T/tail.bin" >"$T/big.bin"
	"$PY" "$MODEL" bits bpc "$T/big.bin" >"$T/m.big"
	"$BUDDYCTL" analyze -e "$T/big.bin" >"$T/c.big" 2>"$T/err"
	same "per-entry across read buffers (1.15 MiB, padded tail)" \
		"$T/m.big" "$T/c.big"
	cat "$T/m.bpc" "$T/vec.want" >"$T/m.two"
	"$BUDDYCTL" analyze -e "$T/var.bin" "$T/vec.bin" >"$T/c.two"
	same "per-entry of two files: every entry of every file in order" \
		"$T/m.two" "$T/c.two"

	# JSON report against the model's totals.
	"$PY" "$MODEL" report "$T/var.bin" "$T/vec.bin" >"$T/m.json"
	"$BUDDYCTL" analyze --json "$T/var.bin" "$T/vec.bin" >"$T/c.json"
	check "--json report equals the model (bytes, ratios, histograms)" \
		"$PY" -c '
import json, sys
m = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert c["files"] == m["files"], "files"
assert c["entries"] == m["entries"], "entries"
assert [x["codec"] for x in c["codecs"]] == [x["codec"] for x in m["codecs"]]
for x, y in zip(c["codecs"], m["codecs"]):
    for k in ("bytes_fig3", "bytes_buddy", "histogram"):
        assert x[k] == y[k], (x["codec"], k, x[k], y[k])
    for k in ("ratio_fig3", "ratio_buddy"):
        assert abs(x[k] - y[k]) < 1e-3, (x["codec"], k, x[k], y[k])
' "$T/m.json" "$T/c.json"
else
	skp "codecs against the model" "$NOPY"
fi

# --- tail padding -----------------------------------------------------------
if [ $have_py = 1 ]; then
	head -c 300 "$T/var.bin" >"$T/odd.bin"
	"$PY" "$MODEL" bits bpc "$T/odd.bin" >"$T/m.odd"
	expect_rc "per-entry of a 300-byte file exits 0" 0 \
		"$BUDDYCTL" analyze --per-entry "$T/odd.bin"
	same "300-byte file: 3 entries, last one zero-padded" "$T/m.odd" "$T/out"
	check "zero-padding note on stderr names the file" \
		grep -q "odd.bin.*zero-padded" "$T/err"
	check "stdout holds only decimal numbers, one per line" \
		sh -c "! grep -qv '^[0-9][0-9]*\$' '$T/out'"
else
	skp "tail padding" "$NOPY"
fi

# --- stdin ------------------------------------------------------------------
if [ $have_py = 1 ]; then
	"$BUDDYCTL" analyze -e - <"$T/var.bin" >"$T/c.stdin"
	same "'-' reads stdin (redirected file)" "$T/m.bpc" "$T/c.stdin"
	cat "$T/var.bin" | "$BUDDYCTL" analyze -e - >"$T/c.pipe"
	same "'-' reads stdin (pipe)" "$T/m.bpc" "$T/c.pipe"
	cat "$T/vec.bin" | "$BUDDYCTL" analyze -e "$T/var.bin" - >"$T/c.mix"
	same "file then '-' in order" "$T/m.two" "$T/c.mix"
else
	skp "stdin" "$NOPY"
fi

# --- JSON -------------------------------------------------------------------
head -c 65536 /dev/zero >"$T/zero.bin"
if [ $have_py = 1 ]; then
	"$PY" "$MODEL" random "$T/rand.bin" 1024 42
	"$BUDDYCTL" analyze --json "$T/zero.bin" "$T/rand.bin" >"$T/j" 2>"$T/err"
	check "--json output parses" \
		sh -c "'$PY' -c 'import json,sys; json.load(sys.stdin)' <'$T/j'"
	check "--json: keys present, histogram sums to entries" "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["entries"] == 512 + 1024 and j["bytes"] == 65536 + 131072
assert len(j["files"]) == 2
assert [c["codec"] for c in j["codecs"]] == ["bpc", "zvc", "bdi", "fpc", "none"]
for c in j["codecs"]:
    for k in ("ratio_fig3", "ratio_buddy", "bytes_fig3", "bytes_buddy"):
        assert k in c, k
    assert sorted(c["histogram"]) == sorted(["zero", "c8", "c32", "c64",
                                             "c96", "raw"])
    assert sum(c["histogram"].values()) == j["entries"], c
' "$T/j"
	"$BUDDYCTL" analyze --json "$T/zero.bin" >"$T/jz"
	check "all-zero file: every ratio is \"inf\" in JSON" "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["entries"] == 512
for c in j["codecs"]:
    assert c["ratio_fig3"] == "inf" and c["ratio_buddy"] == "inf", c
    assert c["bytes_fig3"] == 0 and c["histogram"]["zero"] == 512, c
' "$T/jz"
	"$BUDDYCTL" analyze --json "$T/rand.bin" >"$T/jr"
	check "random file: Fig. 3 and Buddy ratios 1.00 for every codec" \
		"$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
for c in j["codecs"]:
    assert c["ratio_fig3"] == 1.0 and c["ratio_buddy"] == 1.0, c
    assert c["bytes_fig3"] == 131072 and c["histogram"]["raw"] == 1024, c
' "$T/jr"
	# Half T2 (15 bits: 8 B), half random (128 B): 256 / 136 = 1.8824.
	dd if="$T/vec.bin" bs=128 skip=1 count=1 2>/dev/null >"$T/t2.bin"
	for i in 1 2 3 4 5 6 7 8; do cat "$T/t2.bin"; done >"$T/t2x8.bin"
	head -c 1024 "$T/rand.bin" >"$T/r8.bin"
	"$BUDDYCTL" analyze --json -c bpc "$T/t2x8.bin" "$T/r8.bin" >"$T/jh"
	check "known mix: Fig. 3 ratio 256/136 = 1.8824, c8 8, raw 8" \
		"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["codecs"]
assert len(c) == 1 and c[0]["codec"] == "bpc"
c = c[0]
assert abs(c["ratio_fig3"] - 256 / 136) < 1e-4, c
assert c["bytes_fig3"] == 8 * 8 + 8 * 128, c
assert c["histogram"]["c8"] == 8 and c["histogram"]["raw"] == 8, c
' "$T/jh"
else
	skp "JSON" "$NOPY"
fi

# --- readable table ----------------------------------------------------------
"$BUDDYCTL" analyze "$T/zero.bin" >"$T/txt"
check "table: all-zero file prints inf for bpc" \
	sh -c "grep -E '^bpc +inf +inf ' '$T/txt' >/dev/null"
check "table: all five codecs by default" \
	sh -c "test \$(grep -cE '^(bpc|zvc|bdi|fpc|none) ' '$T/txt') -eq 5"
head -c 131072 /dev/urandom >"$T/urand.bin"
"$BUDDYCTL" analyze -c bpc,zvc "$T/urand.bin" >"$T/txt"
check "table: random bytes give 1.00, --codec bpc,zvc picks two" \
	sh -c "grep -qE '^bpc +1\.00 +1\.00 ' '$T/txt' &&
	       grep -qE '^zvc +1\.00 +1\.00 ' '$T/txt' &&
	       test \$(grep -cE '^(bpc|zvc|bdi|fpc|none) ' '$T/txt') -eq 2"

# --- empty input, wide numbers, any file name ---------------------------------
: >"$T/empty.bin"
expect_rc "empty input exits 0" 0 "$BUDDYCTL" analyze "$T/empty.bin"
check "empty input: 'no data', not inf" \
	sh -c "grep -q '^no data' '$T/out' && ! grep -q inf '$T/out'"
if [ $have_py = 1 ]; then
	"$BUDDYCTL" analyze --json "$T/empty.bin" >"$T/je"
	check "empty input: null ratios in JSON, not \"inf\"" "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["entries"] == 0
assert all(c["ratio_fig3"] is None and c["ratio_buddy"] is None for c in j["codecs"]), j
' "$T/je"
	# a name that is not UTF-8 (Latin-1 bytes): the JSON must still be
	bad=$(printf '%s/caf\351-\377.bin' "$T")
	cp "$T/zero.bin" "$bad"
	"$BUDDYCTL" analyze --json -c bpc "$bad" >"$T/ju"
	check "a file name that is not UTF-8: the JSON is valid UTF-8, bad bytes U+FFFD" "$PY" -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
j = json.loads(raw.decode("utf-8"))		# strict: fails on bad bytes
assert j["files"][0].endswith("/caf\ufffd-\ufffd.bin"), j["files"]
' "$T/ju"
	# one non-zero entry among 700000 zero ones: a Fig. 3 ratio of
	# 11200000.00, wider than its header; every column stays aligned
	"$PY" -c '
import sys
with open(sys.argv[1], "wb") as f:
    f.truncate(700000 * 128)
    f.seek(5 * 128)
    f.write(b"\x01")
' "$T/wide.bin"
	"$BUDDYCTL" analyze -c bpc,none "$T/wide.bin" >"$T/wide.txt"
	check "wide numbers: every cell ends under the end of its header" "$PY" -c '
import re, sys
lines = open(sys.argv[1]).read().splitlines()
h = next(i for i, l in enumerate(lines) if l.startswith("codec"))
ends = lambda l: [m.end() for m in re.finditer(r"\S+", l)]
want = ends(lines[h])
rows = lines[h + 1:]
assert len(rows) == 2 and "11200000.00" in rows[0], rows
for r in rows:
    assert ends(r)[1:] == want[1:], (lines[h], r)
' "$T/wide.txt" || diag "$T/wide.txt"
else
	skp "empty input and UTF-8 in JSON, wide numbers" "$NOPY"
fi

# --- many files, one bad: reported, skipped, the rest analysed ----------------
head -c 1000 /dev/urandom >"$T/r1.bin"
head -c 700 /dev/urandom >"$T/r2.bin"
head -c 4096 /dev/zero >"$T/z4k.bin"
ln -s "$T/nowhere" "$T/dangling.so"
expect_rc "a dangling link among files exits 1" 1 \
	"$BUDDYCTL" analyze "$T/r1.bin" "$T/dangling.so" "$T/r2.bin" "$T/z4k.bin"
check "the dangling link is named as one" \
	grep -q "analyze: $T/dangling.so: No such file or directory (a dangling symbolic link)" "$T/err"
check "the files after it are analysed: the report is printed" \
	grep -q "^files 3 (1 skipped: errors on stderr), bytes 5796, entries 46 " "$T/out"
check "the end says how many were skipped" \
	grep -q "analyze: 1 of 4 files skipped (errors above); the report covers the others" "$T/err"
check "one padding note for two padded files" \
	sh -c "test \$(grep -c 'zero-padded' '$T/err') = 1 && grep -q '2 files are not a multiple of 128 bytes (the first: $T/r1.bin)' '$T/err'"
expect_rc "analyze -e of a missing file then a good one exits 1" 1 \
	"$BUDDYCTL" analyze -e "$T/gone.bin" "$T/z4k.bin"
check "... and still prints the good file's 32 entries" \
	sh -c "test \$(wc -l <'$T/out') = 32"
if [ $have_py = 1 ]; then
	"$BUDDYCTL" analyze --json "$T/r1.bin" "$T/r2.bin" "$T/z4k.bin" \
		>"$T/good.json"
	"$BUDDYCTL" analyze --json --per-file "$T/r1.bin" "$T/dangling.so" \
		"$T/r2.bin" "$T/z4k.bin" >"$T/skip.json"
	for f in r1 r2 z4k; do
		"$BUDDYCTL" analyze --json "$T/$f.bin" >"$T/one.$f.json"
	done
	check "JSON: the totals of the good files, the bad one under skipped, per_file equals each file alone" \
		"$PY" -c '
import json, sys
t = sys.argv[1]
g = json.load(open(t + "/good.json")); s = json.load(open(t + "/skip.json"))
assert s["skipped"] == [{"file": t + "/dangling.so",
			 "error": "No such file or directory"}], s["skipped"]
assert g["skipped"] == []
for k in ("files", "bytes", "entries", "codecs"):
    assert s[k] == g[k], k
assert [p["file"] for p in s["per_file"]] == s["files"]
for p, f in zip(s["per_file"], ("r1", "r2", "z4k")):
    one = json.load(open(t + "/one." + f + ".json"))
    for k in ("bytes", "entries", "codecs"):
        assert p[k] == one[k], (f, k)
' "$T"
else
	skp "JSON of many files with one bad" "$NOPY"
fi
expect_rc "--per-file text exits 0" 0 \
	"$BUDDYCTL" analyze --per-file -c bpc,zvc "$T/r1.bin" "$T/z4k.bin"
check "--per-file: a header and one row per file, then the totals" \
	sh -c "grep -q '^file  *bytes entries  *bpc  *zvc$' '$T/out' &&
	       grep -q '^$T/r1.bin  *1000  *8 ' '$T/out' &&
	       grep -q '^$T/z4k.bin  *4096  *32  *inf  *inf$' '$T/out' &&
	       grep -q '^files 2, bytes 5096' '$T/out'"
expect_rc "--per-file with --per-entry exits 2" 2 \
	"$BUDDYCTL" analyze --per-file -e "$T/r1.bin"

# --- errors -----------------------------------------------------------------
expect_rc "missing file exits 1" 1 \
	"$BUDDYCTL" analyze "$T/no-such-file.bin"
check "missing file: message names the file and the error" \
	grep -q "no-such-file.bin: No such file or directory" "$T/err"
expect_rc "missing second file exits 1 (per-entry)" 1 \
	"$BUDDYCTL" analyze -e "$T/zero.bin" "$T/gone.bin"
check "missing second file: named on stderr" grep -q "gone.bin" "$T/err"
expect_rc "a directory exits 1" 1 "$BUDDYCTL" analyze "$T"
expect_rc "unknown codec exits 2" 2 \
	"$BUDDYCTL" analyze --codec lzma "$T/zero.bin"
check "unknown codec: names it and lists the valid codecs" \
	sh -c "grep -q lzma '$T/err' && grep -q 'bpc zvc bdi fpc none' '$T/err'"
check "unknown codec: nothing on stdout" test ! -s "$T/out"
expect_rc "--per-entry with two codecs exits 2" 2 \
	"$BUDDYCTL" analyze --per-entry --codec bpc,zvc "$T/zero.bin"
expect_rc "--per-entry with --codec twice exits 2" 2 \
	"$BUDDYCTL" analyze -e -c bpc -c fpc "$T/zero.bin"
expect_rc "no FILE exits 2" 2 "$BUDDYCTL" analyze
expect_rc "unknown option exits 2" 2 "$BUDDYCTL" analyze --bogus "$T/zero.bin"

tap_end
