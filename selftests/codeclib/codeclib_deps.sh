#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libbuddycodec.so loads on a machine that has nothing but glibc: its
# dynamic section needs libc only (libm, libpthread and ld.so are glibc
# too), every symbol it takes from outside is versioned GLIBC_*, it exports
# nothing but the buddy_sizing_* calls, and its soname is the one
# python/buddy/_codec.py loads.  TAP, with a "# Totals:" line.
#
#   codeclib_deps.sh build/lib/libbuddycodec.so.1
so=$1
n=0 pass=0 fail=0
check() {
	n=$((n + 1))
	desc=$1
	shift
	if out=$("$@" 2>&1); then
		pass=$((pass + 1))
		echo "ok $n $desc"
	else
		fail=$((fail + 1))
		echo "not ok $n $desc"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

needed_glibc_only() {
	needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	[ -n "$needed" ] || { echo "no NEEDED entry at all"; return 1; }
	bad=$(printf '%s\n' "$needed" |
		grep -vxE 'libc\.so\.6|libm\.so\.6|libpthread\.so\.0|ld-linux-x86-64\.so\.2')
	[ -z "$bad" ] || { echo "needs: $bad"; return 1; }
}
check "needs glibc only (readelf -d)" needed_glibc_only

imports_glibc_only() {
	# undefined dynamic symbols: each must carry a GLIBC_ version
	bad=$(readelf -W --dyn-syms "$so" | awk '$7 == "UND" && $8 != "" &&
		$8 !~ /@GLIBC_[0-9.]+/ && $5 != "WEAK" { print $8 }')
	[ -z "$bad" ] || { echo "unversioned or foreign imports: $bad"; return 1; }
}
check "imports only GLIBC_* symbols" imports_glibc_only

exports_api_only() {
	exp=$(readelf -W --dyn-syms "$so" | awk '$7 != "UND" &&
		($5 == "GLOBAL" || $5 == "WEAK") && $4 != "SECTION" &&
		$4 != "FILE" { sub(/@.*/, "", $8); print $8 }' |
		grep -v '^BUDDYCODEC_1$')
	[ -n "$exp" ] || { echo "exports nothing"; return 1; }
	bad=$(printf '%s\n' "$exp" | grep -v '^buddy_sizing_')
	[ -z "$bad" ] || { echo "exports: $bad"; return 1; }
	for f in buddy_sizing_abi buddy_sizing_new buddy_sizing_free \
		buddy_sizing_ranges buddy_sizing_entries; do
		printf '%s\n' "$exp" | grep -qx "$f" || { echo "lacks $f"; return 1; }
	done
}
check "exports buddy_sizing_* and nothing else" exports_api_only

soname_ok() {
	readelf -d "$so" | grep -q '(SONAME).*\[libbuddycodec\.so\.1\]'
}
check "soname libbuddycodec.so.1" soname_ok

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
