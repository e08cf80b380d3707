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

# an unknown section: an error here, a warning naming it at startup
printf '[Daemon]\nWindow=4\n[buddyd]\nWindow=5\n[Buddyd]\nStateFile=%s/state/profiles\n' "$T" >"$C"
run 1 "--check-config of unknown sections" --check-config -c "$C"
has "[Daemon] is an error naming the section" "$T/err" "buddyd: error: $C:1: unknown section [Daemon]: buddyd reads [Buddyd] only"
has "[buddyd]: the case is named" "$T/err" "buddyd: error: $C:3: unknown section [buddyd]: buddyd reads [Buddyd] only (section names are case-sensitive)"
run 1 "startup with an unknown section goes on (to the device)" -c "$C" --device="$T/no-such-device" --once
has "the warning names the section and what is ignored" "$T/err" "buddyd: warning: $C:1: unknown section [Daemon], its keys ignored: buddyd reads [Buddyd] only"

# the real cause of an unreadable file
run 1 "--check-config -c DIR" --check-config -c "$T"
has "a directory is named as one" "$T/err" "buddyd: error: $T: Is a directory"
lacks "no 'read error'" "$T/err" "read error"

# one spelling: --apply takes Mode='s words
printf '[Buddyd]\nStateFile=%s/state/profiles\n' "$T" >"$C"
run 0 "--apply=dry-run, as Mode=dry-run" --check-config -c "$C" --apply=dry-run
has "--apply=dry-run is Mode=dry-run" "$T/out" "Mode=dry-run"
run 2 "--apply=none is not a mode" --check-config -c "$C" --apply=none
has "--apply names Mode's words" "$T/err" "buddyd: error: --apply: invalid Mode value 'none' (dry-run, profiles or live)"

# a run on the in-process device: messages for a person, --json alone
run 0 "--once --json (no --report) on an in-process device" -c "$C" \
	--device=inproc:device_mb=8 --state-file="$T/none/profiles" --once --json
if command -v python3 >/dev/null 2>&1; then
	if python3 -c "import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if 'params' in j else 1)" "$T/out"; then
		ok "--json alone prints the report as JSON"
	else
		nok "--json alone prints the report as JSON"; diag "$T/out"
	fi
else
	skp "--json alone prints the report as JSON" "no python3"
fi
has "no state file: the device's table is kept, and said" "$T/err" "buddyd: $T/none/profiles: no state file yet: keeping the 0 profiles installed in inproc:device_mb=8"
if grep -q '^<[0-7]>' "$T/err" || grep -qv '^buddyd: ' "$T/err"; then
	nok "stderr not the journal: every line 'buddyd: ...', no <N>"; diag "$T/err"
else
	ok "stderr not the journal: every line 'buddyd: ...', no <N>"
fi
run 2 "--json without --once" -c "$C" --json
has "--json needs --once" "$T/err" "buddyd: error: --json needs --once"
# stderr is the journal when $JOURNAL_STREAM names it (systemd.exec(5))
: >"$T/journal"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/journal") "$BUDDYD" -c "$C" \
	--device=inproc:device_mb=8 --state-file="$T/none/profiles" --once \
	>/dev/null 2>"$T/journal"
if grep -q '^<6>version ' "$T/journal" && ! grep -q '^buddyd: ' "$T/journal"; then
	ok "stderr the journal: <N> priority prefixes"
else
	nok "stderr the journal: <N> priority prefixes"; diag "$T/journal"
fi

tap_end
