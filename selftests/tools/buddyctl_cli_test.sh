#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# buddyctl's device subcommands without a module: --help of each, usage
# errors (exit 2), runtime errors that name the object (exit 1), "stats"
# from a fake sysfs directory (BUDDY_SYSFS) and "load-profiles --dry-run".
# TAP ending in a kselftest "# Totals:" line.
#
#   selftests/tools/buddyctl_cli_test.sh [path/to/buddyctl]
#
# JSON values are checked with python3 when it is there (else SKIP).

BUDDYCTL=${1:-build/buddyctl}
PY=${PYTHON:-python3}
. "$(dirname "$0")/../lib/tap.sh"
tap_init buddyctl_cli

# run WANT_RC DESCRIPTION ARGS...: stdout in $T/out, stderr in $T/err
run() {
	rw=$1 rd=$2
	shift 2
	tap_run "$rw" "$rd" "$BUDDYCTL" "$@"
}
# pycheck DESCRIPTION PYTHON-EXPR-ON-j: the last stdout parsed as JSON in j
pycheck() {
	if ! command -v "$PY" >/dev/null 2>&1; then
		skp "$1" "no python3"
		return
	fi
	if "$PY" -c "import json,sys; j = json.load(open('$T/out')); sys.exit(0 if ($2) else 1)"; then
		ok "$1"
	else
		nok "$1"
		diag "$T/out"
	fi
}

if [ ! -x "$BUDDYCTL" ]; then
	echo "not ok 1 - $BUDDYCTL is built"
	echo "1..1"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi

for c in info stats list show heatmap set-target show-profiles \
	 load-profiles clear-profiles; do
	run 0 "$c --help" "$c" --help
	if head -1 "$T/out" | grep -q "^usage: buddyctl $c"; then
		ok "$c --help prints its usage"
	else
		nok "$c --help prints its usage"
		diag "$T/out"
	fi
done
run 0 "top-level --help lists set-target" --help
grep -q '^  set-target ' "$T/out" && ok "set-target in the command table" ||
	nok "set-target in the command table"

# ---- one meaning per option letter, from every command's --help -----------
cmds="analyze profile run info stats list show heatmap set-target show-profiles
      load-profiles clear-profiles calibrate"
: >"$T/letters"
for c in $cmds; do
	"$BUDDYCTL" "$c" --help 2>/dev/null |
		sed -n "s/^ *-\([A-Za-z]\), --\([a-z-]*\).*/$c \1 \2/p" >>"$T/letters"
done
# A letter has one long name in every command that has it.  Two names
# of one thing count as one: calibrate's --codecs (it times several) and
# profile's --profile-out (the profile file run's --profile reads).  Each
# letter's long names are those of the table of buddyctl.rst's "Option
# letters", and each of the table's letters is in some command's --help.
RST=$(dirname "$0")/../../Documentation/buddyctl.rst
bad=$(awk '
	FNR == 1 { file++ }
	file == 1 && /^  letter  long option/ { table = 1; next }
	file == 1 && table && /^  ======/ { if (++rule == 2) table = 0; next }
	file == 1 && table {
		if ($1 ~ /^-[A-Za-z]$/) cur = substr($1, 2)
		for (i = 1; i <= NF; i++)
			if (match($i, /--[a-z-]+/))
				doc[cur] = doc[cur] " " substr($i, RSTART + 2, RLENGTH - 2) " "
		next }
	file == 1 { next }
	{ seen[$2] = 1; long = ($3 in same) ? same[$3] : $3 }
	$2 == "d" { print $1 " -d --" $3 " (the device is --device)"; next }
	!($2 in doc) { print $1 " -" $2 " --" $3 " (not in buddyctl.rst)"; next }
	index(doc[$2], " " $3 " ") == 0 {
		print $1 " -" $2 " --" $3 " (buddyctl.rst: -" $2 " is" doc[$2] ")"
		next }
	($2 in first) && long != first[$2] {
		print $1 " -" $2 " --" $3 " (" who[$2] " -" $2 " is --" first[$2] ")"
		next }
	!($2 in first) { first[$2] = long; who[$2] = $1 }
	END { for (x in doc) if (!(x in seen))
		print "buddyctl.rst: -" x " is in no command'"'"'s --help"
	      if (!length(doc)) print "no table in buddyctl.rst" }
	BEGIN { same["codecs"] = "codec"; same["profile-out"] = "profile" }
	' "$RST" "$T/letters")
if [ -s "$T/letters" ] && [ -z "$bad" ]; then
	ok "every option letter means one thing in every command, as buddyctl.rst says, no -d"
else
	nok "every option letter means one thing in every command, as buddyctl.rst says, no -d"
	echo "$bad" | sed 's/^/# /'
fi
grep -q '^calibrate h help$' "$T/letters" && grep -q '^profile U uid$' "$T/letters" &&
	ok "the letters were read from the --help texts" ||
	{ nok "the letters were read from the --help texts"; diag "$T/letters"; }
# The parser takes exactly the letters --help lists.  A letter taken
# stops at a missing argument, COMMAND, ID or FILE, or at the device,
# which does not exist: nothing is changed.
miss=
for c in $cmds; do
	for x in a b c d e f g h i j k l m n o p q r s t u v w x y z \
		 A B C D E F G H I J K L M N O P Q R S T U V W X Y Z; do
		BUDDY_DEVICE="$T/no-such-device" "$BUDDYCTL" "$c" "-$x" \
			</dev/null >/dev/null 2>"$T/err"
		taken=yes listed=no
		grep -q "invalid option -- '$x'" "$T/err" && taken=no
		grep -q "^$c $x " "$T/letters" && listed=yes
		[ $taken = $listed ] ||
			miss="$miss $c -$x (taken: $taken, in --help: $listed);"
	done
done
if [ -z "$miss" ] && [ -s "$T/letters" ]; then
	ok "every command's parser takes exactly the letters its --help lists"
else
	nok "every command's parser takes exactly the letters its --help lists"
	echo "#$miss"
fi
run 0 "calibrate --help" calibrate --help
grep -q '^Exit status: 0 success, 1 runtime error' "$T/out" &&
	ok "calibrate --help has the exit-status line" ||
	{ nok "calibrate --help has the exit-status line"; diag "$T/out"; }

# ---- usage errors: exit 2 ---------------------------------------------------
run 2 "info with an argument" info extra
run 2 "info with an unknown option" info --bogus
run 2 "list --target 3x" list --target 3x
run 2 "list --codec lz4" list --codec lz4
run 2 "list --id 5-3 (reversed range)" list --id 5-3
run 2 "list --pid x" list --pid x
run 2 "list with a positional argument" list 3
run 2 "show without ID" show
err_has "show without ID says so" "missing allocation ID"
run 2 "show abc" show abc
run 2 "show 1 2" show 1 2
run 2 "heatmap without ID" heatmap
run 2 "heatmap --width 0" heatmap --width 0 1
run 2 "heatmap --scale 65" heatmap --scale 65 1
run 2 "heatmap --color=pink" heatmap --color=pink 1
run 2 "set-target without RATIO" set-target 1
run 2 "set-target 1 3 (no such ratio)" set-target 1 3
err_has "set-target names the bad ratio" "invalid RATIO '3'"
run 2 "set-target --codec lz4" set-target --codec lz4 1 2
run 2 "load-profiles without FILE" load-profiles
run 2 "show-profiles with an argument" show-profiles x

# ---- runtime errors: exit 1, naming the object and the errno ----------------
export BUDDY_DEVICE="$T/no-such-device"
run 1 "list without the device" list
err_has "the message names the device and errno" "$T/no-such-device: No such file or directory"
run 1 "show without the device" show 42
run 1 "info without the device" info
run 1 "heatmap without the device" heatmap 1
run 1 "set-target without the device" set-target 1 2
err_lacks() {
	if grep -qF -- "$2" "$T/err"; then nok "$1: stderr has '$2'"; diag "$T/err"; else
		ok "$1"; fi
}
# the path opened, not /dev/buddy; the module's absence and what to do
BUDDY_MODULE_DIR="$T/no-module" run 1 "info without the device or the module" info
err_has "the device path opened is named, modprobe suggested" "buddyctl: $T/no-such-device: No such file or directory (the buddy module is not loaded: modprobe buddy)"
err_lacks "/dev/buddy is not named for another path" "/dev/buddy"
BUDDY_MODULE_DIR="$T" run 1 "info without the device, the module loaded" info
err_lacks "no modprobe when the module is loaded" "modprobe"
BUDDY_DEVICE=/dev/null BUDDY_MODULE_DIR="$T" run 1 "info on /dev/null" info
err_has "the wrong node: 'not a buddy device'" "buddyctl: /dev/null: not a buddy device"
: >"$T/regular"
BUDDY_DEVICE="$T/regular" BUDDY_MODULE_DIR="$T" run 1 "list on a regular file" list
err_has "a regular file: 'not a buddy device'" "buddyctl: $T/regular: not a buddy device"
unset BUDDY_DEVICE

# ---- getopt's messages carry the prefix; help COMMAND -------------------
run 2 "info --bogus" info --bogus
err_has "getopt's message: 'buddyctl: info: unrecognized option'" "buddyctl: info: unrecognized option '--bogus'"
run 2 "list -Z" list -Z
err_has "getopt's message: 'buddyctl: list: invalid option'" "buddyctl: list: invalid option -- 'Z'"
run 2 "load-profiles --dry-run= (no argument taken)" load-profiles --dry-run=x f
err_has "getopt's message with the prefix" "buddyctl: load-profiles: option '--dry-run' doesn't allow an argument"
for c in analyze profile info set-target load-profiles; do
	run 0 "help $c" help "$c"
	if head -1 "$T/out" | grep -q "^usage: buddyctl $c"; then
		ok "help $c prints $c's usage"
	else
		nok "help $c prints $c's usage"; diag "$T/out"
	fi
done
run 2 "help of an unknown command" help nosuch
err_has "help: the unknown command is named" "buddyctl: help: unknown command 'nosuch'"

BUDDY_SYSFS="$T/nosys" run 1 "stats without sysfs" stats
err_has "stats names the file" "$T/nosys/mm_stat: No such file or directory"

# ---- stats from a fake sysfs ------------------------------------------------
mkdir -p "$T/sys"
echo "33554432 1048576 100663296 65536 2097152 3 2000" >"$T/sys/mm_stat"
echo "100 60 300 200 40 30 16 2" >"$T/sys/io_stat"
echo "10 20 30 40 50 60" >"$T/sys/code_stat"
echo "[bpc] zvc bdi fpc none" >"$T/sys/codecs"
export BUDDY_SYSFS="$T/sys"
run 0 "stats --json" stats --json
pycheck "stats: mm_stat columns by name" \
	"j['mm_stat'] == {'device_total': 33554432, 'device_used': 1048576, 'buddy_total': 100663296, 'buddy_used': 65536, 'logical_bytes': 2097152, 'nr_allocs': 3, 'ratio_milli': 2000}"
pycheck "stats: io_stat columns by name" \
	"j['io_stat'] == {'entry_reads': 100, 'entry_writes': 60, 'device_sectors_read': 300, 'device_sectors_written': 200, 'buddy_sectors_read': 40, 'buddy_sectors_written': 30, 'buddy_accesses': 16, 'overflows': 2}"
pycheck "stats: code_stat columns by name" \
	"j['code_stat'] == {'zero': 10, 'c8': 20, 'c32': 30, 'c64': 40, 'c96': 50, 'raw': 60}"
pycheck "stats: ratio and buddy-access fraction 16/160" \
	"j['ratio'] == 2.0 and j['buddy_access_fraction'] == 0.1"
run 0 "stats -u --json" stats -u --json
pycheck "stats -u: byte columns in binary units" \
	"j['mm_stat']['device_total'] == '32.00 MiB' and j['mm_stat']['buddy_used'] == '64.00 KiB' and j['mm_stat']['nr_allocs'] == 3 and j['io_stat']['entry_reads'] == 100"
run 0 "stats (text)" stats
grep -q '^  buddy_accesses  *16$' "$T/out" && grep -q '^buddy_access_fraction  *0.1000$' "$T/out" &&
	ok "stats text shows counters and the fraction" ||
	{ nok "stats text shows counters and the fraction"; diag "$T/out"; }
# a newer module's extra column is ignored, not an error
echo "100 60 300 200 40 30 16 2 99" >"$T/sys/io_stat"
run 0 "stats with an appended io_stat column" stats --json
pycheck "stats: the extra column is not named" "len(j['io_stat']) == 8"
unset BUDDY_SYSFS

# ---- the in-process device: every device command works on it -------------
run 0 "info on --device inproc:" --device inproc:device_mb=16 info
grep -q '^device  *inproc:device_mb=16$' "$T/out" &&
	grep -q '^device  *16777216 ' "$T/out" &&
	ok "info describes the in-process device" ||
	{ nok "info describes the in-process device"; diag "$T/out"; }
grep -q '^ratio  *- (no allocations)$' "$T/out" && ! grep -q '0\.000x' "$T/out" &&
	ok "info on an empty device prints no ratio 0.000x" ||
	{ nok "info on an empty device prints no ratio 0.000x"; diag "$T/out"; }
BUDDY_DEVICE=inproc:device_mb=16 run 0 "list on BUDDY_DEVICE=inproc:" list
pycheck "list of the empty in-process device: []" "j == []"
run 0 "show-profiles on --device inproc:" --device=inproc:device_mb=16 show-profiles
pycheck "show-profiles of the in-process device: []" "j == []"
for c in show heatmap; do
	run 1 "$c 1 on --device inproc:" --device inproc:device_mb=16 $c 1
	err_has "$c 1: the allocation is named, not 'not a buddy device'" \
		"buddyctl: allocation 1: No such file or directory (no live allocation has this id)"
done
BUDDY_SYSFS="$T/sys" run 0 "stats --json on --device inproc: (no sysfs read)" \
	--device inproc:device_mb=16 stats --json
pycheck "stats follows --device: the in-process device's pools" \
	"j['mm_stat']['device_total'] == 16777216 and j['mm_stat']['buddy_total'] == 3 * 16777216 and j['mm_stat']['nr_allocs'] == 0 and j['io_stat']['entry_reads'] == 0"
run 1 "stats on --device /dev/null" --device /dev/null stats
err_has "stats: /dev/null is not a buddy device" "buddyctl: /dev/null: not a buddy device"
BUDDY_MODULE_DIR="$T" run 1 "stats on a missing --device" --device "$T/nodev" stats
err_has "stats names the device path given" "buddyctl: $T/nodev: No such file or directory"
run 1 "info on inproc: with an unknown option" --device inproc:bogus=1 info
err_has "the bad in-process options are named with the valid ones" \
	"buddyctl: inproc:bogus=1: Invalid argument (options: device_mb=N"

# ---- heatmap --file: a dump's picture, no device -----------------------------
head -c 8192 /dev/zero >"$T/dump.bin"
head -c 8192 /dev/urandom >>"$T/dump.bin"
printf 'tail' >>"$T/dump.bin"
run 0 "heatmap --file --json" heatmap --file "$T/dump.bin" --json
pycheck "heatmap --file: 64 zero entries, 64 raw, the padded tail" \
	"j['input'].endswith('/dump.bin') and j['codec'] == 'bpc' and j['entries'] == 129 and j['means'][:64] == [0] * 64 and j['means'][64:128] == [5] * 64 and j['means'][128] < 5"
run 0 "heatmap --file -o PNG" heatmap --file "$T/dump.bin" -c zvc -o "$T/dump.png" --legend
head -c 4 "$T/dump.png" | od -c | grep -q 'P   N   G' && grep -q "dump.bin (zvc, as buddy.ko sizes it): 129 entries" "$T/out" &&
	ok "heatmap --file writes a PNG and says what it shows" ||
	{ nok "heatmap --file writes a PNG and says what it shows"; diag "$T/out"; }
run 1 "heatmap --file of a missing file" heatmap --file "$T/none.bin"
err_has "the file is named" "buddyctl: $T/none.bin: No such file or directory"
run 2 "heatmap --file and an ID" heatmap --file "$T/dump.bin" 3
run 2 "heatmap --codec without --file" heatmap --codec zvc 3
run 2 "heatmap --file --codec lz4" heatmap --file "$T/dump.bin" --codec lz4

# ---- load-profiles --dry-run: the state-file parser, no device ------------
printf '# buddyd profiles\n\n0\tresnet\t4x\tbpc\n1000\tsp ace\\x41\t4/3\tzvc\n  \t\n0\tresnet\t16x\tdefault\n0\t\t2x\tnone\n' >"$T/good.state"
run 0 "load-profiles --dry-run good file" load-profiles --dry-run "$T/good.state"
err_has "a repeated uid and label: the later line wins" "uid 0 label \"resnet\" again: this line wins"
pycheck "dry-run prints the parsed profiles" \
	"j == [{'uid': 0, 'label': 'resnet', 'target': '16x', 'target_bytes': 8, 'codec': 'default'}, {'uid': 1000, 'label': 'sp aceA', 'target': '4/3x', 'target_bytes': 96, 'codec': 'zvc'}, {'uid': 0, 'label': '', 'target': '2x', 'target_bytes': 64, 'codec': 'none'}]"
printf '0\tok\t2x\tbpc\n0\tbad\t3x\tbpc\n0\tbad2\t2x\tlz4\nzero\tx\t2x\tbpc\n0\ta/b\t2x\tbpc\n0\tx\\q\t2x\tbpc\n0\tx\t2x\n' >"$T/bad.state"
run 1 "load-profiles with bad lines" load-profiles --dry-run "$T/bad.state"
err_has "bad target named with file and line" "$T/bad.state:2: invalid target"
err_has "bad codec named" "$T/bad.state:3: invalid codec"
err_has "bad uid named" "$T/bad.state:4: invalid uid"
err_has "label buddy.ko refuses" "$T/bad.state:5: label \"a/b\" is not accepted by buddy.ko"
err_has "bad escape named" "$T/bad.state:6: bad escape in label"
err_has "missing field named" "$T/bad.state:7: expected 4 TAB-separated fields"
err_has "nothing installed" "6 bad lines: nothing installed"
if [ ! -s "$T/out" ]; then ok "nothing printed on stdout"; else nok "nothing printed on stdout"; fi
# the field at fault is named: a CR before the line's last one is the codec's
printf '1\tw\t4x\tbpc\r\r\n' >"$T/crcr.state"
run 1 "load-profiles of a line ending CR CR LF" load-profiles --dry-run "$T/crcr.state"
err_has "CR CR LF: the codec is named, not the label" "$T/crcr.state:1: invalid codec: a carriage return"
# one rule with buddyd (tools/policy/profile_file.h): the first 4096 profiles
awk 'BEGIN { for (i = 0; i < 4100; i++) printf "%d\tl%d\t2x\tbpc\n", i % 3, i }' >"$T/big.state"
run 0 "load-profiles of 4100 profiles: the first 4096 (as buddyd)" load-profiles --dry-run "$T/big.state"
err_has "the first profile past 4096 is named, with the count" "$T/big.state:4097: more than 4096 profiles (the size of buddy.ko's table): this line and 3 later profile lines not loaded"
pycheck "4096 profiles printed, the last one l4095" "len(j) == 4096 and j[-1]['label'] == 'l4095'"
run 1 "load-profiles of a missing file" load-profiles --dry-run "$T/none.state"
err_has "the missing file is named" "$T/none.state: No such file or directory"
run 1 "load-profiles of a directory" load-profiles --dry-run "$T"
err_has "a directory is named as one, not an I/O error" "buddyctl: $T: Is a directory"

# ---- nothing wiped without a word (on an in-process device) ----------------
export BUDDY_DEVICE=inproc:device_mb=8
: >"$T/empty.state"
printf '# only a comment\n\n' >"$T/comment.state"
printf '0\tone\t4x\tbpc\n0\ttwo\t2x\tzvc\n' >"$T/two.state"
for f in empty comment; do
	run 1 "load-profiles of a file without profiles ($f)" load-profiles "$T/$f.state"
	err_has "... changes nothing and says so" \
		"buddyctl: load-profiles: $T/$f.state: no profiles in the file: the device's profile table is left as it was (--replace empties it)"
done
run 0 "load-profiles --replace of an empty file" load-profiles --replace "$T/empty.state"
err_has "... says what it replaced" \
	"buddyctl: load-profiles: $T/empty.state: 0 profiles installed in inproc:device_mb=8, replacing 0"
run 0 "load-profiles of two profiles" load-profiles "$T/two.state"
err_has "... says what it installed and replaced" \
	"buddyctl: load-profiles: $T/two.state: 2 profiles installed in inproc:device_mb=8, replacing 0 (0 with the same uid and label)"
run 0 "load-profiles --merge" load-profiles --merge "$T/two.state"
err_has "... says what it merged" \
	"buddyctl: load-profiles: $T/two.state: 2 profiles merged into inproc:device_mb=8: 0 installed ones replaced, 0 kept"
run 2 "load-profiles --merge --replace" load-profiles --merge --replace "$T/two.state"
run 0 "clear-profiles" clear-profiles
err_has "clear-profiles says what it removed" \
	"buddyctl: clear-profiles: inproc:device_mb=8: 0 profiles removed"
unset BUDDY_DEVICE

tap_end
