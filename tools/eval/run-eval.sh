#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make eval: the Buddy Compression paper's evaluation on real programs that
# Debian ships, each profiled by `buddyctl profile`.
#
#   run-eval.sh BUDDYCTL OUTDIR
#
# Installs (apt-get, once; EVAL_NO_INSTALL=1 skips it) the packages that
# exist in Debian 12: python3-torch python3-torchvision python3-sklearn
# python3-skimage python3-matplotlib libopenblas0-pthread gromacs lammps
# lammps-examples quantum-espresso quantum-espresso-data hpcc openfoam
# openfoam-examples dataset-fashion-mnist.  About 3 GB on disk and 3 minutes here.
# Then tools/eval/eval.py runs every workload (EVAL_ONLY limits
# them: "dl", "hpc" or names) and writes OUTDIR/results.md and results.png,
# and tools/eval/gpu_rows.py adds the GPU rows to results.md
# (EVAL_GPU_ROWS=FILE: rows made on another machine).
# EVAL=quick: the small configurations only (full, the default, adds the
# large inputs); EVAL_TIMING=0: no plain/interposer-only timing runs;
# EVAL_TIME_CAP=SEC: each run killed after SEC s (default 900).
set -eu
BUDDYCTL=$(realpath "$1")
OUT=$2
HERE=$(dirname "$(realpath "$0")")
PKGS="python3-torch python3-torchvision python3-sklearn python3-skimage
python3-matplotlib python3-numpy libopenblas0-pthread gromacs lammps
lammps-examples quantum-espresso quantum-espresso-data hpcc openfoam
openfoam-examples dataset-fashion-mnist"

if [ "${EVAL_NO_INSTALL:-0}" != 1 ]; then
	missing=
	for p in $PKGS; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "eval: installing:$missing"
		SUDO=
		[ "$(id -u)" = 0 ] || SUDO=sudo
		$SUDO apt-get update -qq
		# only those that exist in this release
		avail=
		for p in $missing; do
			if apt-cache show "$p" >/dev/null 2>&1; then
				avail="$avail $p"
			else
				echo "eval: $p is not in this release: skipped"
			fi
		done
		[ -z "$avail" ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get \
			install -y --no-install-recommends $avail
	fi
fi
mkdir -p "$OUT"
case "${EVAL:-full}" in
quick|full) ;;
*) echo "eval: EVAL=$EVAL is not quick or full" >&2; exit 2 ;;
esac
timing=
[ "${EVAL_TIMING:-1}" != 0 ] || timing=--no-timing
/usr/bin/python3 "$HERE/eval.py" --buddyctl "$BUDDYCTL" --out "$OUT" \
	--mode "${EVAL:-full}" $timing ${EVAL_TIME_CAP:+--time-cap "$EVAL_TIME_CAP"} \
	${EVAL_ONLY:+--only "$EVAL_ONLY"} ${EVAL_REPEAT:+--repeat "$EVAL_REPEAT"}
# The GPU rows (tools/eval/gpu_rows.py): run here when python3's torch sees
# a CUDA device, taken from EVAL_GPU_ROWS (a gpu-rows.json made on a GPU
# machine) when set, else the section says they were not run.
BUDDYCTL=$BUDDYCTL python3 "$HERE/gpu_rows.py" --out "$OUT" \
	--merge "$OUT/results.md" ${EVAL_GPU_ROWS:+--rows "$EVAL_GPU_ROWS"}
