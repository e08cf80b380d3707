# SPDX-License-Identifier: GPL-2.0
# TAP helpers of the profile and run tests (sourced; $W is the work dir).
#
#   ok NAME, notok NAME, skip NAME WHY   one result line
#   check NAME COMMAND...                ok when COMMAND exits 0, else not
#                                        ok with its first 30 output lines
#   tap_totals                           the plan, the totals line, and
#                                        status 0 unless something failed
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@" >"$W/check.out" 2>&1; then
		ok "$name"
	else
		notok "$name"
		sed 's/^/# /' "$W/check.out" | head -30
	fi
}
tap_totals() {
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	test "$fail" -eq 0
}
