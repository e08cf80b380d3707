#!/bin/bash
# scripts/guest/run.sh - run shell commands inside a QEMU (TCG) guest that boots
# Debian's 6.1 kernel (the one scripts/kdir.sh builds modules for), and report
# their exit status and any unexpected kernel log lines.
#
# See scripts/guest/README, or run with --help.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${GUEST_BUILD:-$root/build/guest}
export GUEST_BUILD=$build

usage() {
	cat <<'EOF'
usage: scripts/guest/run.sh [options] -- 'shell commands to run in the guest'

options:
  --nodes 2|4          NUMA nodes (default 2).  2: one CPU + memory each.
                       4: adds nodes 2 and 3, memory only (CXL-like far
                       memory; node 2 nearer node 0, node 3 nearer node 1)
  --mem MB             memory per CPU node, MiB (default 256; 1024 with
                       --host-root)
  --far-mem MB         memory per memory-only node with --nodes 4 (default --mem)
  --timeout SEC        host-side limit for the whole run (default 300)
  --file HOST[:GUEST]  copy a file or directory into the guest (repeatable).
                       GUEST defaults to /opt/<basename>; a GUEST ending in /
                       gets <basename> appended.  Binaries must be static.
  --log FILE           full console log (default build/guest/console.log)
  --allow-kmsg REGEX   extended regex of a kernel message (text after the
                       timestamp) that a test logs on purpose (repeatable)
  --append PARAMS      extra kernel command-line parameters
  --host-root          mount the host's / read-only at /host (virtio-9p),
                       ready for 'chroot /host PROGRAM': /proc /sys /dev
                       bound in, /tmp writable tmpfs; CPU model "max"
  --host-rw DIR        with --host-root: export the host directory DIR
                       writable, mounted at DIR both in the guest and in
                       /host (repeatable); results come back through it
  --cpu MODEL          QEMU CPU model (default qemu64; max with --host-root).
                       The kernel's copy routines follow it: rep movsb,
                       slow under TCG, where the model has ERMS (max)
  --kernel FILE        boot FILE (bzImage or ELF vmlinux; default: $KERNEL,
                       else Debian's kernel that prepare.sh fetches)
  -v, --verbose        stream the whole console (boot included) live
  -q, --quiet          do not stream the guest commands' output
  -h, --help           this text

The commands run with busybox sh in /opt, stdin /dev/null, PATH including
/opt and /opt/bin.  Exit status: the commands' status if nonzero; otherwise
0 when the kernel log is clean, 123 when it has unexpected lines,
124 on timeout, 125 when the guest crashed/panicked or did not report;
126 when --host-root could not be set up (the commands did not run).
EOF
}

die() { echo "run.sh: error: $*" >&2; exit 2; }

nodes=2 mem='' far_mem='' timeout_s=300 log='' verbose=0 quiet=0 append=''
cpu=''
kernel=${KERNEL:-}
host_root=0 files=() allow=() host_rw=()
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) nodes=${2:?}; shift 2 ;;
	--nodes=*) nodes=${1#*=}; shift ;;
	--mem) mem=${2:?}; shift 2 ;;
	--mem=*) mem=${1#*=}; shift ;;
	--far-mem) far_mem=${2:?}; shift 2 ;;
	--far-mem=*) far_mem=${1#*=}; shift ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--timeout=*) timeout_s=${1#*=}; shift ;;
	--file) files+=("${2:?}"); shift 2 ;;
	--file=*) files+=("${1#*=}"); shift ;;
	--log) log=${2:?}; shift 2 ;;
	--log=*) log=${1#*=}; shift ;;
	--allow-kmsg) allow+=("${2:?}"); shift 2 ;;
	--allow-kmsg=*) allow+=("${1#*=}"); shift ;;
	--append) append=${2?}; shift 2 ;;
	--append=*) append=${1#*=}; shift ;;
	--host-root) host_root=1; shift ;;
	--cpu) cpu=${2:?}; shift 2 ;;
	--host-rw) host_rw+=("${2:?}"); shift 2 ;;
	--host-rw=*) host_rw+=("${1#*=}"); shift ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--kernel=*) kernel=${1#*=}; shift ;;
	-v | --verbose) verbose=1; shift ;;
	-q | --quiet) quiet=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) usage >&2; die "unknown argument '$1' (commands go after --)" ;;
	esac
done
[ $# -gt 0 ] || { usage >&2; die "no guest commands given (after --)"; }
cmds="$*"
case $nodes in 2 | 4) ;; *) die "--nodes must be 2 or 4" ;; esac
# Python with torch needs more than the default 512 MiB guest.
if [ -z "$mem" ]; then
	if [ "$host_root" = 1 ]; then mem=1024; else mem=256; fi
fi
far_mem=${far_mem:-$mem}
for v in "$mem" "$far_mem" "$timeout_s"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "not a positive number: '$v'"
done
log=${log:-$build/console.log}
for a in "${allow[@]}"; do
	awk -v re="$a" 'BEGIN { if ("" ~ re) {} }' </dev/null >/dev/null 2>&1 ||
		die "--allow-kmsg: bad extended regex '$a'"
done

# --host-rw: absolute, existing directories; QEMU's option parser would
# split a path at a comma, and the guest's shell script at a quote.
rw_dirs=()
if [ ${#host_rw[@]} -gt 0 ]; then
	[ "$host_root" = 1 ] || die "--host-rw needs --host-root"
	for d in "${host_rw[@]}"; do
		[ -d "$d" ] || die "--host-rw: not a directory: $d"
		d=$(cd "$d" && pwd -P) || die "--host-rw: cannot resolve $d"
		[[ $d != / && $d =~ ^/[A-Za-z0-9._/+@=-]*$ ]] ||
			die "--host-rw: '$d': not supported (the root itself, or a character other than letters, digits and /._+@=-)"
		rw_dirs+=("$d")
	done
fi
prep_args=(-q)
[ "$host_root" = 1 ] && prep_args+=(--host-root)
KERNEL=$kernel "$here/prepare.sh" "${prep_args[@]}" || die "prepare.sh failed"
vmlinux=${kernel:-$build/vmlinux}

# --- the debug-exit helper (static) ------------------------------------------
dbgexit=$build/debug-exit
if [ ! -x "$dbgexit" ] || [ "$here/debug-exit.c" -nt "$dbgexit" ]; then
	t=$(mktemp "$build/.debug-exit.XXXXXX")
	gcc -static -Os -Wall -Wextra -Werror -o "$t" "$here/debug-exit.c" ||
		{ rm -f "$t"; die "cannot build debug-exit"; }
	chmod 755 "$t" && mv -f "$t" "$dbgexit"
fi

# 9p mount options (measured here): msize 512000 is what the
# virtio transport allows; cache=loose makes the read-only host root fast.
# The writable exports skip the cache so results reach the host at once.
P9_RO=trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose
P9_RW=trans=virtio,version=9p2000.L,msize=512000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/guest-run.XXXXXX")
# shellcheck disable=SC2317 # called by the trap
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- initramfs -----------------------------------------------------------------
# Two concatenated newc archives (the kernel unpacks both): a cached base with
# busybox, its applet links and debug-exit, and this run's /init and files.
base_cpio=$build/base.cpio
if [ ! -s "$base_cpio" ] || [ /bin/busybox -nt "$base_cpio" ] ||
	[ "$dbgexit" -nt "$base_cpio" ] || [ "$here/run.sh" -nt "$base_cpio" ]; then
	b=$tmp/base
	mkdir -p "$b"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,mnt,opt}
	cp /bin/busybox "$b/bin/busybox"
	# Links made here: "busybox --install" in the guest costs ~0.5 s of TCG.
	/bin/busybox --list-full | while read -r a; do
		[ -e "$b/$a" ] || ln -s /bin/busybox "$b/$a"
	done
	cp "$dbgexit" "$b/sbin/debug-exit"
	t=$(mktemp "$build/.base.cpio.XXXXXX")
	(cd "$b" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) >"$t" || die "cpio failed"
	chmod 644 "$t" && mv -f "$t" "$base_cpio"
	rm -rf "$b"
fi

ir=$tmp/root
mkdir -p "$ir"/{etc,opt}

for spec in "${files[@]}"; do
	hostp=$spec guestp=
	# HOST:GUEST, split at the last ':' when what follows is absolute.
	if [[ $spec == *:/* ]]; then
		hostp=${spec%:/*} guestp=/${spec##*:/}
	fi
	[ -e "$hostp" ] || die "--file: no such file: $hostp"
	base=$(basename "$hostp")
	case $guestp in
	"") guestp=/opt/$base ;;
	*/) guestp=$guestp$base ;;
	esac
	mkdir -p "$ir$(dirname "$guestp")"
	cp -rL "$hostp" "$ir$guestp" || die "--file: cannot copy $hostp"
	# Warn about dynamically linked programs: the guest has no libc.
	while IFS= read -r -d '' f; do
		if [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
			readelf -l "$f" 2>/dev/null | grep -q 'program interpreter'; then
			echo "run.sh: warning: ${f#"$ir"} is dynamically linked; the guest has no libc (use gcc -static)" >&2
		fi
	done < <(find "$ir$guestp" -type f -perm -u+x -print0)
done

printf '%s\n' "$cmds" >"$ir/etc/guest-cmd.sh"

# --host-root: the 9p modules (prepare.sh --host-root) and the setup script
# /init runs before the commands.  The guest's /tmp, /dev/shm and the
# --host-rw directories are the only writable places under /host.
: >"$ir/etc/host-root.sh"
if [ "$host_root" = 1 ]; then
	mkdir -p "$ir/lib/host-root"
	while read -r m; do
		cp "$build/host-root/$m" "$ir/lib/host-root/" || die "missing $build/host-root/$m"
	done <"$build/host-root/load-order"
	cp "$build/host-root/load-order" "$ir/lib/host-root/"
	{
		cat <<'EOS'
hr_fail() { echo "run.sh guest: --host-root: $*"; exit 1; }
while read -r m; do
	insmod "/lib/host-root/$m" || hr_fail "insmod $m failed"
done </lib/host-root/load-order
mkdir -p /host
EOS
		echo "mount -t 9p -o $P9_RO hostroot /host || hr_fail 'mount of the host root failed'"
		cat <<'EOS'
for d in proc sys dev; do
	mount -o rbind "/$d" "/host/$d" || hr_fail "bind mount of /$d failed"
done
mount -t tmpfs -o mode=1777 tmpfs /host/tmp || hr_fail "tmpfs on /host/tmp failed"
EOS
		i=0
		for d in "${rw_dirs[@]}"; do
			echo "mkdir -p '/host$d' '$d' 2>/dev/null"
			echo "mount -t 9p -o $P9_RW rw$i '/host$d' || hr_fail 'mount of $d failed'"
			echo "mount --bind '/host$d' '$d' || hr_fail 'bind mount of $d failed'"
			i=$((i + 1))
		done
	} >"$ir/etc/host-root.sh"
fi

# Markers.  The kmsg one splits boot from test in the kernel log.
M_CMD_BEGIN='@@GUEST-RUN: COMMANDS BEGIN@@'
M_CMD_END='@@GUEST-RUN: COMMANDS END@@'
M_DMESG_BEGIN='@@GUEST-RUN: DMESG BEGIN@@'
M_DMESG_END='@@GUEST-RUN: DMESG END@@'
M_KMSG='guest-run: commands begin'

cat >"$ir/init" <<EOF
#!/bin/busybox sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
export PATH=/opt/bin:/opt:/usr/local/bin:/sbin:/usr/sbin:/bin:/usr/bin
export HOME=/root TERM=dumb TMPDIR=/tmp
hostname guest
# lo up: MPI_Init needs it.
ip link set lo up 2>/dev/null
cd /opt
echo "$M_CMD_BEGIN"
if sh /etc/host-root.sh </dev/null; then
	echo "<5>$M_KMSG" >/dev/kmsg
	sh /etc/guest-cmd.sh </dev/null
	rc=\$?
else
	rc=126
fi
sync
echo "$M_CMD_END rc=\$rc"
# Stop anything the commands left running, then dump the whole kernel log
# (raw: "<facility*8+level>[time] text") for the host to check.
kill -KILL -1 2>/dev/null
sleep 0.2
echo "$M_DMESG_BEGIN"
dmesg -r
echo "$M_DMESG_END"
code=\$rc
[ \$code -gt 127 ] && code=127
/sbin/debug-exit \$code
echo "run.sh guest: debug-exit failed; powering off"
poweroff -f
EOF
chmod 755 "$ir/init"

initrd=$tmp/initrd.cpio
cp "$base_cpio" "$initrd"
(cd "$ir" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --quiet) >>"$initrd" || die "cpio failed"

# --- qemu ----------------------------------------------------------------------
kcmdline="console=ttyS0 loglevel=5 slub_debug=FZPU panic_on_warn=1"
kcmdline+=" hung_task_panic=1 softlockup_panic=1 panic=-1 oops=panic"
# TCG: a stable sched_clock (no "Unstable clock" warning), no TSC watchdog or
# TSC warp checks that misfire under emulation.
kcmdline+=" tsc=reliable"
# Skip the crypto self-tests (0.7 s of TCG boot).
kcmdline+=" cryptomgr.notests"
kcmdline+=" log_buf_len=4M printk.devkmsg=on rdinit=/init"
# --host-root: enabling the virtio-9p device's interrupt through ACPI (AML
# for the PCI link under TCG) takes 10 s; the BIOS's PIRQ table, 35 ms.
[ "$host_root" = 1 ] && kcmdline+=" pci=noacpi"
[ -n "$append" ] && kcmdline+=" $append"

# --host-root runs the host's programs: torch dies of SIGILL on qemu64.
# --cpu overrides (make profile-guest: qemu64, as make bench-guest boots).
if [ -z "$cpu" ]; then
	cpu=qemu64
	[ "$host_root" = 1 ] && cpu=max
fi
# shellcheck disable=SC2054 # commas are qemu's
qargs=(-nodefaults -no-user-config -machine pc -cpu "$cpu" -accel tcg
	-display none -no-reboot
	-kernel "$vmlinux" -initrd "$initrd" -append "$kcmdline"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-chardev stdio,id=con,mux=off -serial chardev:con
	-smp 2,sockets=2)
total=$((2 * mem))
# shellcheck disable=SC2054
qargs+=(-object "memory-backend-ram,id=m0,size=${mem}M" -numa node,nodeid=0,memdev=m0,cpus=0
	-object "memory-backend-ram,id=m1,size=${mem}M" -numa node,nodeid=1,memdev=m1,cpus=1)
if [ "$nodes" = 4 ]; then
	total=$((total + 2 * far_mem))
	# shellcheck disable=SC2054
	qargs+=(-object "memory-backend-ram,id=m2,size=${far_mem}M" -numa node,nodeid=2,memdev=m2
		-object "memory-backend-ram,id=m3,size=${far_mem}M" -numa node,nodeid=3,memdev=m3
		-numa dist,src=0,dst=1,val=21
		-numa dist,src=0,dst=2,val=24 -numa dist,src=1,dst=3,val=24
		-numa dist,src=0,dst=3,val=34 -numa dist,src=1,dst=2,val=34
		-numa dist,src=2,dst=3,val=44)
fi
qargs+=(-m "${total}M")
if [ "$host_root" = 1 ]; then
	# multidevs=remap: / spans several host filesystems; without it QEMU
	# warns of inode number collisions.
	# shellcheck disable=SC2054
	qargs+=(-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot)
	i=0
	for d in "${rw_dirs[@]}"; do
		# shellcheck disable=SC2054
		qargs+=(-fsdev "local,id=rw$i,path=$d,security_model=none,multidevs=remap"
			-device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
		i=$((i + 1))
	done
fi

mkdir -p "$(dirname "$log")"
: >"$log" || die "cannot write $log"

# Live view: whole console (-v), the commands' section (default), nothing (-q).
show() {
	if [ "$quiet" = 1 ]; then
		cat >/dev/null
	elif [ "$verbose" = 1 ]; then
		cat
	else
		awk -v b="$M_CMD_BEGIN" -v e="$M_CMD_END" '
			index($0, e) { l = $0; sub(/@@GUEST-RUN: COMMANDS END@@.*/, "", l)
				if (l != "") print l; p = 0; fflush(); next }
			p { print; fflush() }
			index($0, b) { p = 1 }'
	fi
}

start=$(date +%s.%N)
timeout --foreground -k 5 "$timeout_s" qemu-system-x86_64 "${qargs[@]}" </dev/null 2>"$tmp/qemu.err" |
	stdbuf -oL tr -d '\r' | tee "$log" | show
qrc=${PIPESTATUS[0]}
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
if [ -s "$tmp/qemu.err" ]; then
	{ echo "--- qemu stderr ---"; cat "$tmp/qemu.err"; } >>"$log"
fi

# --- verdict -------------------------------------------------------------------
fail() { # status message...
	local st=$1
	shift
	echo "run.sh: FAIL: $*" >&2
	echo "run.sh: console log: $log; its last 60 lines (kernel log dump: test part only):" >&2
	awk -v b="$M_DMESG_BEGIN" -v e="$M_DMESG_END" -v mark="$M_KMSG" '
		$0 == b { d = 1; t = 0; print; next }
		$0 == e { d = 0; print; next }
		!d || t { print; next }
		index($0, "] " mark) { t = 1; print }' "$log" |
		tail -n 60 | sed 's/^/  | /' >&2
	exit "$st"
}

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	fail 124 "timeout after ${timeout_s}s (guest hung?)"
fi
if grep -q 'Kernel panic - not syncing' "$log"; then
	fail 125 "kernel panic (qemu status $qrc, ${secs}s)"
fi
endline=$(grep -a "$M_CMD_END rc=" "$log" | tail -n 1)
if [ -z "$endline" ]; then
	fail 125 "guest did not finish the commands (qemu status $qrc: crash, reboot or qemu error)"
fi
grc=${endline##*rc=}
[[ $grc =~ ^[0-9]+$ ]] || fail 125 "bad status line: $endline"
want=$(((grc > 127 ? 127 : grc) * 2 + 1))
if [ "$qrc" != "$want" ]; then
	fail 125 "qemu exit status $qrc, expected $want from debug-exit (guest status $grc)"
fi
if ! grep -qx "$M_DMESG_END" "$log"; then
	fail 125 "kernel log dump incomplete"
fi

# Kernel log check.  Records before the kmsg marker are boot; those after it
# come from the test.  Boot records fail only on the keywords (the TCG boot
# logs nondeterministic warn-level noise: MTRR, PIT calibration, PCI NUMA);
# test records fail on the keywords and on any level <= 4 (warning).
allowf=$tmp/allow
{
	# kernel/module/main.c (6.1): pr_warn / pr_notice_once when loading an
	# out-of-tree, unsigned module.
	echo '^[^ :]+: loading out-of-tree module taints kernel\.$'
	echo '^[^ :]+: module verification failed: signature and/or required key missing - tainting kernel$'
	# kernel/time/hrtimer.c, pr_warn_once: a slow interrupt, i.e. a busy
	# host under TCG.
	echo '^hrtimer: interrupt took [0-9]+ ns$'
	for a in "${allow[@]}"; do [ -n "$a" ] && printf '%s\n' "$a"; done
} >"$allowf"
kw='(^|[^A-Za-z_])(WARNING|BUG|Oops)([^A-Za-z_]|$)|Call Trace|kmemleak|general protection'
kw+='|slab-out-of-bounds|Poison overwritten|Redzone|list_add corruption|list_del corruption'
kw+='|hung_task|blocked for more than|soft lockup|hard LOCKUP|Kernel panic|UBSAN|KASAN'
kw+='|rcu.*detected stall|Unable to handle|NULL pointer dereference|Bad page|double fault'
# The debug kernel's detectors (most of their reports also start "BUG:" or
# "WARNING:"): KFENCE, KCSAN, lockdep, refcount.
kw+='|KFENCE: |KCSAN: |possible (circular|recursive) locking|inconsistent lock state'
kw+='|lockdep is turned off|refcount_t: '

sed -n "/^$M_DMESG_BEGIN\$/,/^$M_DMESG_END\$/p" "$log" >"$tmp/dmesg"
awk -v kw="$kw" -v mark="$M_KMSG" -v allowf="$allowf" '
	BEGIN { n = 0; while ((getline l < allowf) > 0) allow[n++] = l }
	match($0, /^<[0-9]+>/) {
		lvl = substr($0, 2, RLENGTH - 2) % 8
		msg = substr($0, RLENGTH + 1)
		sub(/^\[ *[0-9]+\.[0-9]+\] ?/, "", msg)
		if (msg == mark) { test = 1; next }
		# The command line names hung_task_panic etc.
		if (msg ~ /^(Kernel )?[Cc]ommand line: /) next
		if (!(msg ~ kw || (test && lvl <= 4))) next
		for (i = 0; i < n; i++) if (msg ~ allow[i]) next
		print (test ? "" : "(boot) ") $0
	}' "$tmp/dmesg" >"$tmp/bad" ||
	fail 2 "kernel log check failed to run (bad --allow-kmsg regex?)"
if ! grep -q "$M_KMSG" "$tmp/dmesg"; then
	echo "run.sh: warning: kernel log lost the start marker (log overflow?); checked all of it as boot" >&2
fi

status=$grc
if [ -s "$tmp/bad" ]; then
	echo "run.sh: unexpected kernel log lines ($(wc -l <"$tmp/bad")):" >&2
	head -n 100 "$tmp/bad" | sed 's/^/  ! /' >&2
	[ "$grc" = 0 ] && status=123
fi
if [ "$status" != 0 ]; then
	if [ "$grc" != 0 ]; then
		fail "$status" "guest commands exited with status $grc (${secs}s)"
	fi
	fail "$status" "unexpected kernel log lines (${secs}s)"
fi
echo "run.sh: ok: guest commands passed, kernel log clean (${nodes} nodes, ${secs}s)" >&2
exit 0
