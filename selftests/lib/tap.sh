# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers of the shell tests, sourced, never run (the one copy; the
# Python tests have selftests/lib/tap.py):
#
#   . "$(dirname "$0")/../lib/tap.sh"
#   tap_init NAME        counters, "TAP version 13", and $T: a scratch
#                        directory /tmp/NAME.XXXXXX removed at exit
#   ok DESC / nok DESC / skp DESC REASON / diag FILE...
#   check DESC CMD ARGS...
#                        ok when CMD exits 0, else not ok with the first 30
#                        lines of its output (stdout and stderr, in
#                        $T/check.out)
#   tap_run WANT DESC CMD ARGS...
#                        run CMD with stdout in $T/out and stderr in $T/err;
#                        ok when it exits WANT, else not ok with stderr
#   err_has DESC TEXT    the last command's stderr holds TEXT
#   tap_end              the plan and the kselftest "# Totals:" line that
#                        scripts/summary.sh adds up; status 0 unless
#                        something failed

tap_init() {
	pass=0 fail=0 skip=0 n=0
	T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	# shellcheck disable=SC2064 # $T is fixed from here on
	trap "rm -rf '$T'" EXIT INT TERM
	echo "TAP version 13"
}

ok()  { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
skp() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { sed 's/^/# /' "$@" | head -10; }

check() {
	_d=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		ok "$_d"
	else
		nok "$_d"
		sed 's/^/# /' "$T/check.out" | head -30
	fi
}

tap_run() {
	_want=$1 _d=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" = "$_want" ]; then
		ok "$_d (exit $_want)"
	else
		nok "$_d: exit $_rc, want $_want"
		diag "$T/err"
	fi
}

err_has() {
	if grep -qF -- "$2" "$T/err"; then ok "$1"; else
		nok "$1: stderr lacks '$2'"; diag "$T/err"; fi
}

tap_end() {
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	[ "$fail" -eq 0 ]
}
