#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/demo/run-demo.sh - run buddy-demo in the QEMU guest on real data from
# Debian packages plus the demo's synthetic data classes.
#
# Usage: tools/demo/run-demo.sh [DEMO_BIN] [-- extra buddy-demo options]
#
# DEMO_BIN defaults to build/demo/buddy-demo (make demo-bin); kmod/buddy.ko
# must be built (make module).  The real data, resolved on the host with
# dpkg -L and copied into the guest:
#
#   eng.traineddata   tesseract-ocr-eng      Tesseract's English LSTM model
#                                            (trained weights)
#   fmnist-t10k       dataset-fashion-mnist  Fashion-MNIST test images,
#                                            gunzipped here (IDX, 10000x28x28)
#   qemu-microvm      qemu-system-x86        /usr/bin/qemu-system-x86_64-microvm
#                                            (an x86-64 ELF binary)
#
# A missing package is installed by scripts/install-deps.sh (which lists
# them); if that is not possible the script stops and names the package.
#
# Environment: DEMO_DEVICE_MB (32), DEMO_MAX_RATIO (4), DEMO_MEM (MiB per
# guest node, 256), DEMO_TIMEOUT (seconds, 300).
#
# Exit status: buddy-demo's, or run.sh's (123 unexpected kernel log lines,
# 124 timeout, 125 guest crash); 2 for a setup error here.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/demo
data=$out/data

bin=$out/buddy-demo
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	bin=$1
	shift
fi
[ "${1:-}" = -- ] && shift
extra=("$@")

device_mb=${DEMO_DEVICE_MB:-32}
max_ratio=${DEMO_MAX_RATIO:-4}
mem=${DEMO_MEM:-256}
timeout_s=${DEMO_TIMEOUT:-300}

die() { echo "run-demo.sh: error: $*" >&2; exit 2; }

[ -x "$bin" ] || die "no demo program $bin (make demo-bin)"
readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter' &&
	die "$bin is dynamically linked; the guest has no libc"
ko=$root/kmod/buddy.ko
[ -f "$ko" ] || die "no $ko (make module)"

# --- real data from Debian packages -------------------------------------------
deps_tried=0
# pkg_file PACKAGE REGEX: the first file of PACKAGE whose path matches REGEX.
pkg_file() {
	local f
	f=$(dpkg -L "$1" 2>/dev/null | grep -E "$2" | head -n 1) || true
	[ -n "$f" ] && [ -f "$f" ] && [ -s "$f" ] && echo "$f"
}
need() { # PACKAGE REGEX WHAT
	local f
	if ! f=$(pkg_file "$1" "$2"); then
		if [ "$deps_tried" = 0 ]; then
			deps_tried=1
			echo "run-demo.sh: $3 (Debian package $1) is missing; running scripts/install-deps.sh" >&2
			"$root/scripts/install-deps.sh" >&2 ||
				die "scripts/install-deps.sh failed; install $1 by hand (apt-get install $1)"
		fi
		f=$(pkg_file "$1" "$2") ||
			die "$3 not found: Debian package $1 must be installed (apt-get install $1; scripts/install-deps.sh lists it)"
	fi
	echo "$f"
}

weights=$(need tesseract-ocr-eng '/eng\.traineddata$' "the English Tesseract model")
fmnist_gz=$(need dataset-fashion-mnist '/t10k-images-idx3-ubyte\.gz$' "the Fashion-MNIST test images")
binary=$(need qemu-system-x86 '^/usr/bin/qemu-system-x86_64-microvm$' "the qemu-system-x86_64-microvm binary")

mkdir -p "$data"
fmnist=$data/fmnist-t10k-images-idx3-ubyte
if [ ! -s "$fmnist" ] || [ "$fmnist_gz" -nt "$fmnist" ]; then
	gzip -dc "$fmnist_gz" >"$fmnist.tmp" || die "cannot decompress $fmnist_gz"
	mv -f "$fmnist.tmp" "$fmnist"
fi
# IDX magic of unsigned-byte 3-d data: 00 00 08 03.
[ "$(head -c4 "$fmnist" | od -An -tx1 | tr -d ' \n')" = 00000803 ] ||
	die "$fmnist: not an IDX3 image file"

# The binary is data here: copy it without its execute bit (run.sh checks
# executables for a libc they would need).
bincopy=$data/qemu-system-x86_64-microvm
if [ ! -s "$bincopy" ] || [ "$binary" -nt "$bincopy" ]; then
	install -m 644 "$binary" "$bincopy" || die "cannot copy $binary"
fi

echo "run-demo.sh: data: $weights (tesseract-ocr-eng)"
echo "run-demo.sh: data: $fmnist_gz, gunzipped (dataset-fashion-mnist)"
echo "run-demo.sh: data: $binary (qemu-system-x86)"

# --- the guest ------------------------------------------------------------------
# Extra options first (single-quoted for the guest shell), then the files.
args=
for a in "${extra[@]}"; do
	args+="'${a//\'/}' "
done
args+="eng.traineddata:tesseract-ocr-eng:/opt/data/eng.traineddata"
args+=" fmnist-t10k:dataset-fashion-mnist:/opt/data/fmnist-t10k-images"
args+=" qemu-microvm:qemu-system-x86:/opt/data/qemu-system-x86_64-microvm"

guest_cmds="
insmod /opt/buddy.ko device_mb=$device_mb max_ratio=$max_ratio device_node=0 buddy_node=1 || exit 1
/opt/bin/buddy-demo $args
rc=\$?
rmmod buddy || { echo 'run-demo.sh: rmmod buddy failed'; rc=1; }
exit \$rc
"

mkdir -p "$out"
set +e
"$root/scripts/guest/run.sh" --nodes 2 --mem "$mem" --timeout "$timeout_s" \
	--log "$out/console.log" \
	--file "$ko:/opt/buddy.ko" \
	--file "$bin:/opt/bin/buddy-demo" \
	--file "$weights:/opt/data/eng.traineddata" \
	--file "$fmnist:/opt/data/fmnist-t10k-images" \
	--file "$bincopy:/opt/data/qemu-system-x86_64-microvm" \
	-- "$guest_cmds" 2>&1 | tee "$out/demo.out"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" = 0 ]; then
	echo "run-demo.sh: PASS (output in $out/demo.out)"
else
	echo "run-demo.sh: FAIL: status $rc (output in $out/demo.out, console in $out/console.log)" >&2
fi
exit "$rc"
