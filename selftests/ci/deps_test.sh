#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# deps_test.sh - selftests/ci/check-deps.py can fail, and says why: run on a
# synthetic project (a Makefile whose check stage runs a script) with
# manifests that are wrong in each way the check knows, then with a right
# one.  TAP on stdout, closing "# Totals:" line.
src=$(cd "$(dirname "$0")/../.." && pwd)
check=$src/selftests/ci/check-deps.py
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $*"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $*"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/deps-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
p=$work/proj
mkdir -p "$p/scripts"

# The project: `make check` runs check-a, whose recipe runs a script that
# runs programs directly, through a variable's default, through a function
# that runs its arguments, and through timeout.
printf 'CC = cc\ncheck: check-a\ncheck-a: out.o\n\t@scripts/a.sh\n%%.o: %%.c\n\t$(CC) -c -o $@ $<\n' >"$p/Makefile"
cat >"$p/scripts/a.sh" <<'S'
#!/bin/sh
sed -n p /dev/null
PY=${PYTHON:-python3}
"$PY" -c 'print(1)'
run() { what=$1; shift; "$@"; }
run "version" groff -v
timeout 5 FROBNICATE_PROG --x
. "$(dirname "$0")/lib.sh"
libfn sed -n p /dev/null
S
chmod +x "$p/scripts/a.sh"
# a sourced file's functions are the script's own, not programs
printf 'libfn() { "$@"; }\n' >"$p/scripts/lib.sh"

# run_check MANIFEST-TEXT...: each argument one or more manifest lines;
# check-deps.py's output in $work/out, its status in $rc
run_check() {
	printf '%s\n' "$@" >"$work/manifest"
	(cd "$p" && python3 "$check" --manifest "$work/manifest" check) \
		>"$work/out" 2>&1
	rc=$?
}
has() { # description regex
	if grep -qE "$2" "$work/out"; then
		ok "$1"
	else
		sed 's/^/# | /' "$work/out"
		nok "$1"
	fi
}
frob=frobnicate-deps-test-$$
sed -i "s/FROBNICATE_PROG/$frob/" "$p/scripts/a.sh"

good="package build-essential
package python3
package groff-base
command cc gcc
command sh dash
command sed sed
command python3 python3
command groff groff-base
command timeout coreutils
command dirname coreutils"

# 1. a program the stage runs that the manifest does not name
run_check "$good"
[ $rc = 1 ] && ok "an unlisted program fails the check (exit 1)" ||
	nok "an unlisted program fails the check (exit 1, got $rc)"
has "it is named with the script and line that runs it" \
	"^not ok [0-9]+ $frob: run at scripts/a\.sh:7 but not a 'command' line"
# The unknown program becomes sed for the rest.
sed -i "s/$frob --x/sed q \/dev\/null/" "$p/scripts/a.sh"

# 2. the right manifest passes
run_check "$good"
[ $rc = 0 ] && ok "the right manifest passes" ||
	{ sed 's/^/# | /' "$work/out"; nok "the right manifest passes (exit $rc)"; }
has "cc resolves through /etc/alternatives to gcc-12, in build-essential's Depends" \
	"^ok [0-9]+ cc: .*gcc-12.*(Depends of a listed package|listed)"
has "sed is accepted as Priority: required" \
	"^ok [0-9]+ sed: .*Priority: required"
if grep -q "not seen by the scan" "$work/out"; then
	sed 's/^/# | /' "$work/out"
	nok "the scan finds python3 (\$PY), groff (a function's \"\$@\"), timeout's program, cc (a pattern rule)"
else
	ok "the scan finds python3 (\$PY), groff (a function's \"\$@\"), timeout's program, cc (a pattern rule)"
fi

# 3. a program whose package install-deps.sh would not install
run_check "$(echo "$good" | grep -v 'package groff-base')"
[ $rc = 1 ] && ok "an uncovered package fails the check" ||
	nok "an uncovered package fails the check (exit $rc)"
has "it names the command and the package to add" \
	"^not ok [0-9]+ groff: .* in package groff-base, which install-deps.sh does not install \(add 'package groff-base'"

# 4. a program that is not on the machine
run_check "$good" "command no-such-program-$$ no-such-package"
has "a program missing from the machine fails, naming it and its package" \
	"^not ok [0-9]+ no-such-program-$$: not found on this machine \(manifest: package no-such-package"

# 5. a manifest naming the wrong package
run_check "$(echo "$good" | sed 's/^command sed sed$/command sed grep/')"
has "a wrong package is caught: manifest vs dpkg -S" \
	"^not ok [0-9]+ sed: .*says package grep, but /usr/bin/sed is in sed"

# 6. a bad manifest line
run_check "$good" "comand typo x"
has "a malformed manifest line is reported with its line number" \
	"^# .*manifest:11: not 'package PKG' or 'command CMD PKG': comand typo x"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
