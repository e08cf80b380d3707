#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# "buddyctl calibrate" without a device: a small run writes a model file
# that parses as JSON with one model per codec, its samples and a finite
# RAE; usage errors exit 2 naming the option and the bad value; an
# unwritable output exits 1 naming the file.  TAP with a "# Totals:" line.
#
#   selftests/dnn/calibrate_cli_test.sh [path/to/buddyctl]

BUDDYCTL=${1:-build/buddyctl}
PY=${PYTHON:-python3}
. "$(dirname "$0")/../lib/tap.sh"
tap_init calibrate_cli

# run WANT_RC DESCRIPTION ARGS...: stdout in $T/out, stderr in $T/err
run() {
	rw=$1 rd=$2
	shift 2
	tap_run "$rw" "$rd" "$BUDDYCTL" calibrate "$@"
}

SMALL="--sizes 4096,16384 --sparsities 0.2,0.8 --repeat 1"

run 0 "small run of three codecs to a file" $SMALL -c zvc,csr,dpr8 -o "$T/m.json"
if "$PY" - "$T/m.json" <<'PYEOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "buddy-calibration" and d["version"] == 1, d
assert d["features"] == ["1", "size", "sparsity", "size*sparsity"]
names = [c["name"] for c in d["codecs"]]
assert names == ["zvc", "csr", "dpr8"], names
for c in d["codecs"]:
    assert c["lossless"] == (c["name"] != "dpr8"), c["name"]
    for k in ("compress", "decompress", "bytes"):
        assert len(c[k]["coef"]) == 4 and all(math.isfinite(x) for x in c[k]["coef"])
    # 2 sizes x 2 sparsities x 2 runs, each [size, sparsity, tc, td, bytes]
    assert len(c["samples"]) == 8 and all(len(s) == 5 for s in c["samples"])
    assert all(s[2] > 0 and s[3] > 0 for s in c["samples"])
# The encoded-size model of CSR is exact: 2 bytes a row + 5 a non-zero
# word is linear in size and size*sparsity, so its RAE is ~0.
csr = d["codecs"][1]
assert csr["bytes"]["rae"] < 0.05, csr["bytes"]
# dpr8 keeps a quarter: bytes = size / 4.
dpr = d["codecs"][2]
assert all(s[4] == s[0] // 4 for s in dpr["samples"]), dpr["samples"]
PYEOF
then ok "model file is valid JSON with a model per codec"; else nok "model file is valid JSON with a model per codec"; fi

run 0 "CSWAP's sub-models: --bins 2" --sizes 4096,16384 --sparsities 0.2,0.3,0.8,0.9 --repeat 1 -c csr -b 2
if "$PY" -c "
import json, sys
d = json.load(open('$T/out'))
assert d['bins'] == 2
for k in ('compress', 'decompress', 'bytes'):
    b = d['codecs'][0][k]['bins']
    assert [x['sparsity'] for x in b] == [[0.2, 0.55], [0.55, 0.9]], b
    assert all(len(x['coef']) == 4 for x in b)
# Within a bin CSR's encoded size is still exact, and so is the
# piecewise model scored on all second runs.
assert all(x['rae'] < 0.05 for x in d['codecs'][0]['bytes']['bins'])
assert d['codecs'][0]['bytes']['bins_rae'] < 0.05
assert all(d['codecs'][0][k]['bins_rae'] >= 0 for k in ('compress', 'decompress'))
"; then ok "one sub-model per sparsity range"; else nok "one sub-model per sparsity range"; diag "$T/out"; fi
run 2 "a sub-model without two sparsities" --sizes 4096,8192 --sparsities 0.2,0.3,0.8 -b 2
err_has "the empty sub-model is named" "sub-model 1 of sparsities 0.5-0.8"
run 2 "bins zero" $SMALL -b 0
err_has "bad bins is named" "--bins: '0'"

run 0 "default codecs to stdout" $SMALL
if "$PY" -c "import json,sys; d = json.load(open('$T/out')); n = [c['name'] for c in d['codecs']]; sys.exit(0 if 'zvc' in n and 'zlib' in n and 'lz4' in n and 'rle' in n and 'dpr8' not in n and 'binarize' not in n else 1)"; then
	ok "default is every lossless codec, no lossy one"; else nok "default is every lossless codec, no lossy one"; diag "$T/out"; fi

run 0 "--list" --list
if grep -qx "dpr10 (lossy)" "$T/out" && grep -qx "binarize (mask only)" "$T/out" && grep -qx "zvc" "$T/out"; then
	ok "--list flags the lossy codecs"; else nok "--list flags the lossy codecs"; diag "$T/out"; fi

run 2 "unknown codec" $SMALL -c zvc,nosuch
err_has "unknown codec is named" "unknown codec 'nosuch'"
run 2 "size not a multiple of 4" --sizes 4096,4098 --sparsities 0.2,0.8
err_has "bad size is named" "--sizes: '4098'"
run 2 "size zero" --sizes 0,4096
err_has "size zero is named" "--sizes: '0'"
run 2 "sparsity above 1" --sizes 4096,8192 --sparsities 0.2,1.5
err_has "bad sparsity is named" "--sparsities: '1.5'"
run 2 "sparsity not a number" --sizes 4096,8192 --sparsities 0.2,abc
err_has "sparsity not a number is named" "--sparsities: 'abc'"
run 2 "one size only" --sizes 4096,4096 --sparsities 0.2,0.5
err_has "one size is refused with the reason" "need two different sizes"
run 2 "one sparsity only" --sizes 4096,8192 --sparsities 0.5
err_has "one sparsity is refused with the reason" "need two different sparsities"
run 2 "repeat zero" $SMALL --repeat 0
err_has "bad repeat is named" "--repeat: '0'"
run 2 "unknown option" --bogus
run 2 "stray argument" $SMALL extra
err_has "stray argument is named" "unexpected argument 'extra'"
run 1 "unwritable output" $SMALL -c zvc -o "$T/no/such/dir/m.json"
err_has "unwritable output names the file" "$T/no/such/dir/m.json"
if [ -e "$T/no" ]; then nok "nothing left behind"; else ok "nothing left behind"; fi
# --tensors: real tensors from files, each timed once.  Ten tensors of
# known sizes and zero fractions (numpy's tofile() format); the samples
# must carry exactly those sizes and sparsities, in name order.
mkdir -p "$T/acts"
"$PY" - "$T/acts" <<'PYEOF'
import struct, sys
for k in range(10):
    n = 1024 * (1 + k % 3)
    zeros = (k * n) // 10
    v = [0.0] * zeros + [1.5 + i % 7 for i in range(n - zeros)]
    open(f"{sys.argv[1]}/{k:03d}.f32", "wb").write(struct.pack(f"{n}f", *v))
open(f"{sys.argv[1]}/notes.txt", "w").write("not a tensor")
PYEOF
run 0 "--tensors: ten real tensors" -c csr,zvc --repeat 1 --tensors "$T/acts" -o "$T/t.json"
if "$PY" - "$T/t.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["data"] == "tensors", d.get("data")
for c in d["codecs"]:
    s = c["samples"]
    assert len(s) == 10, len(s)
    for k, row in enumerate(s):
        n = 1024 * (1 + k % 3)
        assert row[0] == 4 * n, (k, row)
        assert abs(row[1] - ((k * n) // 10) / n) < 1e-9, (k, row)
# CSR's size model is exact on these as on generated data.
assert d["codecs"][0]["bytes"]["rae"] < 0.05, d["codecs"][0]["bytes"]
PYEOF
then ok "--tensors: samples are the files' sizes and sparsities"; else nok "--tensors: samples are the files' sizes and sparsities"; diag "$T/t.json"; fi
mkdir -p "$T/few"
cp "$T/acts/000.f32" "$T/acts/001.f32" "$T/few/"
run 1 "--tensors: too few tensors" -c zvc --tensors "$T/few"
err_has "too few tensors says how many are needed" "2 *.f32 files, need at least 8"
printf 'abc' >"$T/acts/bad.f32"
run 1 "--tensors: a file that is not float32" -c zvc --tensors "$T/acts"
err_has "the odd-sized file is named" "$T/acts/bad.f32: 3 bytes"
run 1 "--tensors: no such directory" -c zvc --tensors "$T/nosuch"
err_has "the missing directory is named" "--tensors $T/nosuch"
run 2 "--tensors with --sizes" --sizes 4096,8192 --tensors "$T/acts"
err_has "--tensors with --sizes is refused" "not with --sizes"

run 0 "--help" --help
if grep -q -- "--sparsities" "$T/out"; then ok "--help lists the options"; else nok "--help lists the options"; fi

tap_end
[ $fail -eq 0 ]
