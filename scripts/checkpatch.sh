#!/bin/sh
# checkpatch.pl (from Debian's linux-source-6.1, extracted by `make harness`)
# over the kernel module, the shared core compiled into it and the uapi
# header: one TAP line per file, and a
# totals line for scripts/summary.sh.
cp=${CHECKPATCH:-build/scripts/checkpatch.pl}
out=${RESULTS:-build/results}/native-checkpatch.log
mkdir -p "$(dirname "$out")"
pass=0 fail=0 n=0
: >"$out"
for f in $(ls kmod/*.c kmod/*.h core/*.c core/*.h core/codecs/*.c uapi/linux/*.h |
	  grep -v '\.mod\.c$'); do
	n=$((n + 1))
	# compat.h's userspace half defines the kernel's attribute macros
	# (__aligned, as include/linux/compiler_attributes.h does): the
	# definition cannot use the macro it defines
	ign=
	[ "$f" = core/compat.h ] && ign="--ignore PREFER_DEFINED_ATTRIBUTE_MACRO"
	if res=$(perl "$cp" --no-tree --terse --show-types $ign -f "$f" 2>&1) &&
	   ! echo "$res" | grep -q -E 'ERROR|WARNING|CHECK'; then
		echo "ok $n checkpatch $f" >>"$out"
		pass=$((pass + 1))
	else
		echo "not ok $n checkpatch $f" >>"$out"
		echo "$res" | sed 's/^/# /' >>"$out"
		fail=$((fail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0" >>"$out"
grep -E '^not ok|^# [^T]' "$out"
tail -1 "$out"
[ $fail -eq 0 ]
