#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# buddyd --check-config, natively (no device, no root needed beyond the
# temporary directory): the settings in force on stdout, every problem on
# stderr naming file and line, exit 0/1; an unknown key is an error here;
# systemd time spans and a UTF-8 byte-order mark; and, at startup, an
# unwritable StateFile= is refused before anything else.  TAP ending in a
# kselftest "# Totals:" line.
#
#   selftests/daemon/check_config_test.sh [path/to/buddyd]

BUDDYD=${1:-build/buddyd}
. "$(dirname "$0")/../lib/tap.sh"
tap_init buddyd_check

# run WANT_RC DESCRIPTION ARGS...: stdout in $T/out, stderr in $T/err
run() {
	rw=$1 rd=$2
	shift 2
	tap_run "$rw" "$rd" "$BUDDYD" "$@"
}
has() { # has DESCRIPTION FILE TEXT
	if grep -qF -- "$3" "$2"; then ok "$1"; else
		nok "$1: $(basename "$2") lacks '$3'"; diag "$2"; fi
}
lacks() {
	if grep -qF -- "$3" "$2"; then nok "$1: $(basename "$2") has '$3'"; diag "$2"; else
		ok "$1"; fi
}

C=$T/buddyd.conf
mkdir -p "$C.d" "$T/state"
# a byte-order mark, a span with a TAB and days, a drop-in on top
printf '\357\273\277[Buddyd]\nInterval=1min\t30s\nWindow=4\nStateFile=%s/state/profiles\nDevice=%s/no-such-device\n' "$T" "$T" >"$C"
printf '[Buddyd]\nThreshold=12.5%%\n' >"$C.d/10-thr.conf"
run 0 "--check-config of a good file, without a device" --check-config -c "$C"
has "the settings in force: the span with a TAB" "$T/out" "Interval=1min30s"
has "the settings in force: the drop-in's Threshold" "$T/out" "Threshold=12.5%"
has "the settings in force: the file's Window (after a BOM)" "$T/out" "Window=4"
has "the settings in force: the default MostlyZero" "$T/out" "MostlyZero=90%"
if [ ! -s "$T/err" ]; then ok "no problem reported"; else nok "no problem reported"; diag "$T/err"; fi
run 0 "--check-config with a command-line override" --check-config -c "$C" --interval=1d
has "the command line wins" "$T/out" "Interval=24h"

# every problem, each with file and line; an unknown key is an error
printf '[Buddyd]\nthreshold=50%%\nWindow=0\nInterval=10 parsecs\nStateFile=%s/state/profiles\n' "$T" >"$C"
run 1 "--check-config of a file with three problems" --check-config -c "$C"
has "the misspelt key is an error naming the key meant" "$T/err" "buddyd.conf:2: unknown key 'threshold' in section [Buddyd]: keys are case-sensitive, Threshold= is meant? In force: Threshold=30%"
has "the bad Window is named" "$T/err" "buddyd.conf:3: invalid Window value '0'"
has "the bad Interval says what is accepted" "$T/err" "buddyd.conf:4: invalid Interval value '10 parsecs' (a time span of 1ms..1d as systemd writes it"
has "the settings are printed all the same" "$T/out" "Window=10"

# an unwritable state file: a problem here, a refusal at startup
printf '[Buddyd]\nStateFile=%s/not-a-dir/profiles\n' "$T" >"$C"
: >"$T/not-a-dir"
run 1 "--check-config with a StateFile that cannot be written" --check-config -c "$C"
has "the StateFile is named" "$T/err" "StateFile=$T/not-a-dir/profiles: cannot be written"
run 1 "startup with a StateFile that cannot be written" -c "$C" --device="$T/no-such-device"
has "refused at startup, before the device is opened" "$T/err" "StateFile=$T/not-a-dir/profiles: cannot be written"
lacks "the device is not even tried" "$T/err" "no-such-device"
run 0 "--dry-run never writes it: no check" --check-config -c "$C" --dry-run

# outside --check-config an unknown key stays a warning
printf '[Buddyd]\nthreshold=50%%\nStateFile=%s/state/profiles\n' "$T" >"$C"
run 1 "startup with an unknown key goes on (to the device)" -c "$C" --device="$T/no-such-device" --once
has "the warning names the value in force" "$T/err" "unknown key 'threshold' in section [Buddyd], ignored: keys are case-sensitive, Threshold= is meant? In force: Threshold=30%"
has "and then the device is the error" "$T/err" "no-such-device"
run 2 "--check-config with --once is a usage error" --check-config --once

tap_end
