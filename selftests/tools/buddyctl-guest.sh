#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# buddyctl-guest.sh - run buddyctl's device subcommands against buddy.ko
# INSIDE the QEMU guest (started by `make check-buddyctl`) and print what
# they produce; selftests/tools/buddyctl_check.py checks it on the host.
#
# buddyctl_hold makes allocations of known content (its JSON says what it
# made and which size code every entry has) and holds them; two of them run,
# so that owners differ in pid, and some allocations are made as uid 1000.
#
# Output blocks, one per command (kernel console lines may interleave):
#   ### BEGIN <name> rc=<status>
#   <stdout>
#   ### STDERR <name>
#   <stderr>
#   ### END <name>
# Binary files travel as base64 in a "### BEGIN <name>.b64 rc=0" block.

dir=$(cd "$(dirname "$0")" && pwd)
PATH=$dir:$PATH
T=/tmp/bctl
mkdir -p $T

cap() {
	name=$1
	shift
	"$@" >$T/out 2>$T/err
	rc=$?
	echo "### BEGIN $name rc=$rc"
	cat $T/out
	echo "### STDERR $name"
	cat $T/err
	echo "### END $name"
}
cap_b64() {
	echo "### BEGIN $1.b64 rc=0"
	base64 "$2"
	echo "### STDERR $1.b64"
	echo "### END $1.b64"
}
wait_file() {
	i=0
	while [ ! -f "$1" ] && [ $i -lt 300 ]; do
		usleep 100000
		i=$((i + 1))
	done
	[ -f "$1" ]
}

echo "# buddyctl-guest.sh: $(uname -r)"
insmod $dir/buddy.ko device_mb=32 max_ratio=4 device_node=0 buddy_node=1 ||
	{ echo "### FATAL insmod failed"; exit 1; }

cap info.empty buddyctl info --json
cap list.empty buddyctl list
cap show-profiles.empty buddyctl show-profiles

# holder A: three allocations, one of them as uid 1000
buddyctl_hold -o $T/a.json \
	alpha:49152:2x:bpc:0:bands \
	beta:65536:4x:zvc:1000:ramp \
	gamma:1000:1x:none:0:raw &
pa=$!
# holder B: "alpha" again as uid 1000, a large banded one, an AUTO one
buddyctl_hold -o $T/b.json \
	alpha:32768:2x:bdi:1000:code-3 \
	delta:4194304:4/3x:bpc:0:bands \
	autolbl:65536:auto:default:0:code-1 &
pb=$!
wait_file $T/a.json && wait_file $T/b.json ||
	{ echo "### FATAL buddyctl_hold did not start"; exit 1; }
cap hold.a cat $T/a.json
cap hold.b cat $T/b.json
echo "### PIDS $pa $pb"

# ids by label and holder
ida() { awk -v l="\"$1\"" '$0 ~ "\"label\": " l { sub(/.*"id": /, ""); sub(/,.*/, ""); print; exit }' $T/a.json; }
idb() { awk -v l="\"$1\"" '$0 ~ "\"label\": " l { sub(/.*"id": /, ""); sub(/,.*/, ""); print; exit }' $T/b.json; }
A_ALPHA=$(ida alpha) A_BETA=$(ida beta) A_GAMMA=$(ida gamma)
B_ALPHA=$(idb alpha) B_DELTA=$(idb delta) B_AUTO=$(idb autolbl)
echo "### IDS alpha=$A_ALPHA beta=$A_BETA gamma=$A_GAMMA balpha=$B_ALPHA delta=$B_DELTA auto=$B_AUTO"

# ---- info, stats ---------------------------------------------------------
cap info.json buddyctl info --json
cap info.human buddyctl info -u --json
cap info.text buddyctl info
cap info.text-human buddyctl info -u
cap stats.json buddyctl stats --json
cap stats.text buddyctl stats -u

# ---- list and its filters --------------------------------------------------
cap list.all buddyctl list
cap list.human buddyctl list -u
cap list.pid-a buddyctl list --pid $pa
cap list.pid-ab buddyctl list --pid $pa,$pb
cap list.pid-a-b buddyctl list --pid $pa --pid $pb
cap list.label-alpha buddyctl list --label alpha
cap list.label-alpha-gamma buddyctl list --label alpha,gamma
cap list.label-alpha-uid1000 buddyctl list --label alpha --uid 1000
cap list.label-alpha-pid-a buddyctl list --label alpha --pid $pa
cap list.target-2x buddyctl list --target 2x
cap list.target-2x-4x buddyctl list --target 2x,4 --target 16x
cap list.uid1000-target-4x buddyctl list --uid 1000 --target 4x
cap list.id-two buddyctl list --id $A_BETA,$B_DELTA
cap list.id-range buddyctl list --id $A_ALPHA-$A_GAMMA
cap list.codec-bpc buddyctl list --codec bpc
cap list.one buddyctl list --id $A_GAMMA
cap list.none buddyctl list --label no-such-label
cap list.bad-target buddyctl list --target 3x

# ---- show ------------------------------------------------------------------
cap show.alpha buddyctl show $A_ALPHA
cap show.auto buddyctl show --json $B_AUTO
cap show.human buddyctl show -u $B_DELTA
cap show.missing buddyctl show 99999
cap show.noarg buddyctl show

# ---- heatmap ---------------------------------------------------------------
cap heatmap.alpha-png buddyctl heatmap $A_ALPHA -o $T/alpha.png
cap_b64 heatmap.alpha-png $T/alpha.png
cap heatmap.alpha-legend-png buddyctl heatmap $A_ALPHA -o $T/alpha-legend.png --legend --json
cap_b64 heatmap.alpha-legend-png $T/alpha-legend.png
cap heatmap.delta-png buddyctl heatmap $B_DELTA -o $T/delta.png --legend
cap_b64 heatmap.delta-png $T/delta.png
cap heatmap.delta-png-r100 buddyctl heatmap $B_DELTA -o $T/delta100.png --max-rows 100 --width 32 --scale 2
cap_b64 heatmap.delta-png-r100 $T/delta100.png
cap heatmap.alpha-plain buddyctl heatmap $A_ALPHA
cap heatmap.alpha-256 buddyctl heatmap --color=256 --legend $A_ALPHA
cap heatmap.alpha-truecolor buddyctl heatmap --color=truecolor $A_ALPHA
cap heatmap.delta-plain buddyctl heatmap --no-color $B_DELTA
cap heatmap.delta-256 buddyctl heatmap --color=256 $B_DELTA
cap heatmap.delta-rows40 buddyctl heatmap --color=256 --max-rows 40 $B_DELTA
cap heatmap.delta-json buddyctl heatmap --json $B_DELTA
cap heatmap.gamma-plain buddyctl heatmap $A_GAMMA
cap heatmap.beta-json buddyctl heatmap --json --width 16 $A_BETA
cap heatmap.missing buddyctl heatmap 99999
cap heatmap.badwidth buddyctl heatmap --width 0 $A_ALPHA

cap heatmap.stdout-png sh -c "buddyctl heatmap -o - $A_ALPHA >$T/stdout.png"
cap_b64 heatmap.stdout-png $T/stdout.png

# ---- without privilege ---------------------------------------------------------
cap noperm.open buddyctl_hold --as 1000 buddyctl list
chmod 666 /dev/buddy
cap noperm.list buddyctl_hold --as 1000 buddyctl list
cap noperm.info buddyctl_hold --as 1000 buddyctl info --json
chmod 660 /dev/buddy

# ---- set-target --------------------------------------------------------------
cap set-target.beta-2 buddyctl set-target $A_BETA 2
cap show.beta-after buddyctl show $A_BETA
cap set-target.alpha-4-zvc buddyctl set-target --json $A_ALPHA 4x --codec zvc
cap set-target.gamma-same buddyctl set-target $A_GAMMA 1
cap set-target.missing buddyctl set-target 99999 2
cap set-target.badratio buddyctl set-target $A_BETA 3
rm -f $T/a.json.verify
kill -USR1 $pa
wait_file $T/a.json.verify
cap verify.a cat $T/a.json.verify

# ---- profiles ------------------------------------------------------------------
printf '# buddyd state\n0\tautolbl\t4x\tzvc\n1000\tbeta\t16x\tdefault\n0\tsp\\x41ce\t2x\tbpc\n' >$T/good.state
printf '0\tok\t2x\tbpc\n0\tbad\t3x\tbpc\n' >$T/bad.state
printf '0\tgamma\t4/3x\tfpc\n0\tautolbl\t2x\tbdi\n' >$T/merge.state
cap set-target.auto-none buddyctl set-target $B_AUTO auto
cap load-profiles.good buddyctl load-profiles $T/good.state
cap show-profiles.good buddyctl show-profiles
cap load-profiles.bad buddyctl load-profiles $T/bad.state
cap show-profiles.after-bad buddyctl show-profiles
: >$T/empty.state
cap load-profiles.empty buddyctl load-profiles $T/empty.state
cap show-profiles.after-empty buddyctl show-profiles
cap set-target.auto buddyctl set-target $B_AUTO auto
cap show.auto-after buddyctl show $B_AUTO
cap set-target.auto-gamma buddyctl set-target $A_GAMMA auto
cap load-profiles.merge buddyctl load-profiles --merge --json $T/merge.state
cap set-target.auto-gamma2 buddyctl set-target --json $A_GAMMA auto
cap clear-profiles buddyctl clear-profiles
cap show-profiles.cleared buddyctl show-profiles
rm -f $T/a.json.verify $T/b.json.verify
kill -USR1 $pa $pb
wait_file $T/a.json.verify && wait_file $T/b.json.verify
cap verify.a2 cat $T/a.json.verify
cap verify.b cat $T/b.json.verify

cap stats.end buddyctl stats --json
cap list.end buddyctl list

# ---- real-looking data: a class per 4 KiB page (datagen "mixed") -----------
buddyctl_hold -o $T/c.json mixed:524288:2x:bpc:0:class-mixed &
pc=$!
wait_file $T/c.json || { echo "### FATAL buddyctl_hold (mixed) did not start"; exit 1; }
cap hold.c cat $T/c.json
C_MIXED=$(awk '/"label": "mixed"/ { sub(/.*"id": /, ""); sub(/,.*/, ""); print; exit }' $T/c.json)
cap show.mixed buddyctl show $C_MIXED
cap heatmap.mixed-256 buddyctl heatmap --color=256 --legend $C_MIXED
cap heatmap.mixed-png buddyctl heatmap -o $T/mixed.png --legend $C_MIXED
cap_b64 heatmap.mixed-png $T/mixed.png

# ---- the end: holders exit, allocations are freed ---------------------------
kill $pa $pb $pc
wait $pa $pb $pc
cap list.freed buddyctl list
cap info.freed buddyctl info --json
rmmod buddy
echo "### DONE"
