#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-install.sh MAKE KVER [OPTIONAL...] - `make install` into a temporary DESTDIR
# and check the result, natively (no guest): the exact file list, the
# library's links, soname and exports, the pkg-config file, the headers, the
# documentation's example compiled, linked (shared and static) and run
# against the installed files, the man pages, the module and the udev rule;
# then `make uninstall` must leave no file.  A second round with PREFIX=/usr
# and INSTALL_MODULE=no.  TAP on stdout, closing "# Totals:" line.
#
# MAKE is the make command to run in the source tree (with its -f), KVER the
# kernel release the module is built for; OPTIONAL is a list of words: "unit"
# when daemon/buddyd.service exists (the systemd unit is expected), "conf"
# when daemon/buddyd.conf does (/etc/buddy/buddyd.conf), "prof" when
# buddyctl profile's interposer is built (lib/buddy/libbuddyprof.so).
make_cmd=${1:?make command}
kver=${2:?kernel release}
opt=" ${3:-} "
unit= conf= prof=
case $opt in *" unit "*) unit=1 ;; esac
case $opt in *" conf "*) conf=1 ;; esac
case $opt in *" prof "*) prof=1 ;; esac
src=$(pwd)
build=${B:-build}
case $build in /*) ;; *) build=$src/$build ;; esac
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $*"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
comment() { sed 's/^/# /'; }

dest=$(mktemp -d /tmp/buddy-install.XXXXXX)
dest2=$(mktemp -d /tmp/buddy-install-usr.XXXXXX)
work=$(mktemp -d /tmp/buddy-example.XXXXXX)
trap 'rm -rf "$dest" "$dest2" "$work"' EXIT

echo "TAP version 13"

# The Python package: its files, and where Debian's python3 looks for it.
pyfiles=$(cd "$src/python/buddy" && ls *.py cuda/*.py cuda/site/*.py torch/*.py | sort)
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pydir=lib/python$pyver/dist-packages

# Files (and symlinks) under DESTDIR after `make install`, nothing else.
expected() {
	p=$1
	cat <<LIST
$p/bin/buddyctl
$p/sbin/buddyd
$p/lib/libbuddy.a
$p/lib/libbuddy.so.1.0.0
$p/lib/libbuddy.so.1
$p/lib/libbuddy.so
$p/lib/libbuddycodec.so.1
$p/lib/buddy/libbuddycudaprof.so
$p/lib/pkgconfig/libbuddy.pc
$p/include/buddy/libbuddy.h
$p/include/linux/buddy.h
$p/share/man/man1/buddyctl.1
$p/share/man/man8/buddyd.8
$p/lib/udev/rules.d/60-buddy.rules
$p/lib/sysusers.d/buddy.conf
$p/share/doc/buddy/README.md
$p/share/doc/buddy/admin-guide.rst
$p/share/doc/buddy/userspace-api.rst
$p/share/doc/buddy/design.rst
$p/share/doc/buddy/dnn.rst
$p/share/doc/buddy/profiler.rst
$p/share/doc/buddy/buddy-example.c
LIST
	if [ "$p" = usr ]; then d=lib/python3/dist-packages; else d=$pydir; fi
	for f in $pyfiles; do echo "$p/$d/buddy/$f"; done
	[ -n "$unit" ] && echo "$p/lib/systemd/system/buddyd.service"
	[ -n "$conf" ] && echo "etc/buddy/buddyd.conf"
	[ -n "$prof" ] && echo "$p/lib/buddy/libbuddyprof.so"
	[ "$2" = module ] && echo "lib/modules/$kver/updates/buddy.ko"
}
tree() { (cd "$1" && find . -type f -o -type l) | sed 's|^\./||' | sort; }
same_tree() {
	expected "$2" "$3" | sort >"$work/want"
	tree "$1" >"$work/got"
	if cmp -s "$work/want" "$work/got"; then
		return 0
	fi
	diff -u "$work/want" "$work/got" | comment
	return 1
}

# ---- 0. plain `make` builds everything `make install` installs --------------
# Asked of make itself: a dry run (-n) of each goal into an empty build
# directory, with --trace naming every target it would update; MAKE=true
# keeps the module's kbuild run out of it.  Every file under the build
# directory that install would build must be one that plain `make` builds.
built_by() { # goal [VAR=value...]
	$make_cmd -n --trace --no-print-directory B="$work/b" MAKE=true "$@" 2>&1 |
		sed -n "s/^[^ ]*:[0-9]*: update target '\(.*\)' due to:.*/\1/p" |
		grep "^$work/b/" | sort -u
}
make_builds_install() {
	built_by all >"$work/all.targets"
	built_by install INSTALL_MODULE=no DESTDIR="$work/d" >"$work/install.targets"
	# the dry runs must have seen the installed programs at all
	grep -qx "$work/b/buddyctl" "$work/install.targets" || {
		echo "# dry run of install names no $work/b/buddyctl" ; return 1; }
	missing=$(comm -13 "$work/all.targets" "$work/install.targets")
	[ -z "$missing" ] && return 0
	echo "$missing" | sed "s|^$work/b/|# make leaves out: \$(B)/|"
	return 1
}
check "plain make builds every file make install installs from \$(B)" make_builds_install
rm -rf "$work/b" "$work/d"

# ---- 1. make install DESTDIR=... (default PREFIX=/usr/local) ---------------
if $make_cmd --no-print-directory install DESTDIR="$dest" >"$work/install.out" 2>&1; then
	ok "make install DESTDIR=$dest"
else
	tail -30 "$work/install.out" | comment
	nok "make install DESTDIR=$dest"
fi
check "installed tree is exactly the expected $(expected usr/local module | wc -l) files" \
	same_tree "$dest" usr/local module

lib=$dest/usr/local/lib
links_ok() {
	[ "$(readlink "$lib/libbuddy.so")" = libbuddy.so.1 ] &&
	[ "$(readlink "$lib/libbuddy.so.1")" = libbuddy.so.1.0.0 ] &&
	[ -f "$lib/libbuddy.so.1.0.0" ] && [ ! -L "$lib/libbuddy.so.1.0.0" ]
}
check "libbuddy.so -> libbuddy.so.1 -> libbuddy.so.1.0.0" links_ok
soname_ok() {
	readelf -d "$lib/libbuddy.so.1.0.0" | grep -q 'SONAME.*\[libbuddy\.so\.1\]' &&
	readelf -d "$lib/libbuddy.so.1.0.0" | grep -q 'NEEDED.*\[liburing\.so'
}
check "soname libbuddy.so.1, needs liburing" soname_ok
exports_ok() {
	nm -D --defined-only "$lib/libbuddy.so.1.0.0" | awk '$2 == "T" { print $3 }' \
		| sed 's/@.*//' | sort >"$work/syms"
	other=$(grep -v '^buddy_' "$work/syms")
	[ -n "$other" ] && { echo "$other" | comment; return 1; }
	for s in buddy_open buddy_alloc_auto buddy_source_name buddy_aio_init \
		 buddy_aio_read buddy_aio_write buddy_aio_ioctl buddy_aio_submit \
		 buddy_aio_wait buddy_aio_exit buddy_tcodec_find \
		 buddy_tcodec_encode buddy_tcodec_decode; do
		grep -qx "$s" "$work/syms" || { echo "# missing $s"; return 1; }
	done
	# nothing of the test data generators, the heuristic, the core or
	# the in-process device's internals
	! grep -q 'datagen\|heur\|buddy_stripe\|buddy_codec_by\|buddy_entry\|inproc_' "$work/syms"
}
check "exports only buddy_* (libbuddy.c, libbuddy_aio.c, libbuddy_tcodec.c; core/, inproc*.c, tcodec.c and gist.c hidden)" exports_ok
static_ok() {
	ar t "$lib/libbuddy.a" | sort | tr '\n' ' ' |
		grep -qx 'alloc.o bdi.o bpc.o bpc_avx2.o bpc_avx2_decode.o chunk.o codec.o fpc.o gist.o inproc.o inproc_ioctl.o libbuddy.o libbuddy_aio.o libbuddy_tcodec.o none.o stripe.o tcodec.o zvc.o '
}
check "libbuddy.a holds libbuddy, libbuddy_aio, libbuddy_tcodec, the whole-buffer codecs, the in-process device and core/ only" static_ok

# pkg-config against DESTDIR: the sysroot prefixes -I and -L
pc() {
	PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest \
	PKG_CONFIG_LIBDIR=/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig \
		pkg-config "$@"
}
pc_ok() {
	[ "$(pc --modversion libbuddy)" = 0.1 ] &&
	[ "$(pc --variable=prefix libbuddy)" = "$dest/usr/local" ] &&
	pc --print-requires-private libbuddy | grep -q '^liburing' &&
	pc --cflags libbuddy | grep -q -- "-I$dest/usr/local/include/buddy"
}
check "libbuddy.pc: version 0.1, prefix /usr/local, Requires.private liburing" pc_ok
header_ok() {
	grep -q '^#include <linux/buddy.h>' "$dest/usr/local/include/buddy/libbuddy.h" &&
	! grep -q '^#include "uapi/' "$dest/usr/local/include/buddy/libbuddy.h" &&
	cmp -s "$src/uapi/linux/buddy.h" "$dest/usr/local/include/linux/buddy.h" &&
	printf '#include <libbuddy.h>\nint main(void) { return BUDDY_ABI_VERSION != 1; }\n' |
		cc -Wall -Werror -x c -o "$work/hdr" - $(pc --cflags libbuddy) &&
	printf '#include <linux/buddy.h>\nint main(void) { return 0; }\n' |
		cc -Wall -Werror -x c -o "$work/hdr2" - -I"$dest/usr/local/include"
}
check "installed headers compile alone (<libbuddy.h> reads <linux/buddy.h>)" header_ok

# The documentation's example against the installed library
ex=$work/buddy-example
build_ok() {
	cc -Wall -Wextra -Werror -o "$ex" "$src/examples/buddy-example.c" \
		$(pc --cflags --libs libbuddy) 2>&1 | comment
	[ -x "$ex" ]
}
check "example compiles and links (shared) with pkg-config --cflags --libs libbuddy" build_ok
run_help() {
	LD_LIBRARY_PATH=$lib "$ex" -h >"$work/help" 2>&1 &&
	grep -q '^usage: ' "$work/help" &&
	LD_LIBRARY_PATH=$lib ldd "$ex" | grep -q "libbuddy.so.1 => $lib/libbuddy.so.1"
}
check "example -h runs against the installed libbuddy.so.1" run_help
run_nodev() {
	LD_LIBRARY_PATH=$lib "$ex" -d /nonexistent/buddy >"$work/nodev" 2>&1
	rc=$?
	comment <"$work/nodev"
	[ $rc = 1 ] && grep -q 'module is not loaded' "$work/nodev"
}
check "example without a device exits 1 naming the cause" run_nodev
static_link() {
	cc -static -o "$ex.static" "$src/examples/buddy-example.c" \
		$(pc --static --cflags --libs libbuddy) 2>&1 | comment
	[ -x "$ex.static" ] && "$ex.static" -h | grep -q '^usage: ' &&
	! ldd "$ex.static" >/dev/null 2>&1
}
check "example links statically (pkg-config --static adds liburing) and runs" static_link
uninst_ok() {
	rm -f "$ex.tree"
	PKG_CONFIG_PATH=$build/lib pkg-config --exists libbuddy &&
	cc -Wall -Werror -o "$ex.tree" "$src/examples/buddy-example.c" \
		$(PKG_CONFIG_PATH=$build/lib pkg-config --cflags --libs libbuddy) \
		-Wl,-rpath,"$build/lib" 2>&1 | comment
	"$ex.tree" -h | grep -q '^usage: ' &&
	ldd "$ex.tree" | grep -q "$build/lib/libbuddy.so.1"
}
check "example builds against the build tree (PKG_CONFIG_PATH=build/lib)" uninst_ok

# The installed package imports from its own directory and, given the
# installed library (ldconfig's job on a real install), loads that one.
py_ok() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$dest/usr/local/$pydir" \
	BUDDY_LIBBUDDY="$dest/usr/local/lib/libbuddy.so.1" \
	/usr/bin/python3 -c "
import buddy, sys
assert buddy.__file__.startswith('$dest/usr/local/$pydir/buddy/'), buddy.__file__
assert buddy._lib.path == '$dest/usr/local/lib/libbuddy.so.1', buddy._lib.path
import importlib.util
spec = importlib.util.find_spec('buddy.torch')
assert spec and spec.origin == '$dest/usr/local/$pydir/buddy/torch/__init__.py', spec
" >"$work/py.out" 2>&1 && return 0
	comment <"$work/py.out"
	return 1
}
check "import buddy (and find buddy.torch) from $pydir, with the installed libbuddy" py_ok
# buddy.cuda, its sitecustomize and the installed sizing library: what
# buddyctl profile --cuda runs
cuda_ok() {
	PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$dest/usr/local/$pydir" \
	BUDDY_LIBBUDDYCODEC="$dest/usr/local/lib/libbuddycodec.so.1" \
	/usr/bin/python3 -c "
import os, buddy.cuda.records, buddy._codec as c
from buddy.cuda import __main__ as m
assert c.path == '$dest/usr/local/lib/libbuddycodec.so.1', c.path
assert os.path.exists(os.path.join(m.SITE, 'sitecustomize.py')), m.SITE
assert m.SITE.startswith('$dest/usr/local/$pydir/buddy/cuda/'), m.SITE
" >"$work/cuda.out" 2>&1 &&
	mkdir -p "$work/rec" &&
	"$dest/usr/local/bin/buddyctl" profile -q --cuda-records "$work/rec" \
		-o /dev/null 2>"$work/cuda.err" && grep -q 'no record' "$work/cuda.err" &&
	return 0
	comment <"$work/cuda.out"
	comment <"$work/cuda.err"
	return 1
}
check "buddy.cuda, its sitecustomize and libbuddycodec.so.1 installed; buddyctl profile --cuda-records runs" cuda_ok
man_ok() {
	for m in man1/buddyctl.1 man8/buddyd.8; do
		f=$dest/usr/local/share/man/$m
		err=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
		[ -z "$err" ] || { echo "$err" | comment; return 1; }
		grep -q '^\.SH NAME' "$f" || return 1
	done
}
check "man pages render without groff warnings" man_ok
module_ok() {
	ko=$dest/lib/modules/$kver/updates/buddy.ko
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] &&
	modinfo -F parm "$ko" | grep -q '^user_limit_mb:'
}
check "buddy.ko in /lib/modules/$kver/updates, built for $kver" module_ok
udev_ok() {
	grep -qx 'KERNEL=="buddy", GROUP="buddy", MODE="0660"' \
		"$dest/usr/local/lib/udev/rules.d/60-buddy.rules" &&
	grep -qx 'g buddy -' "$dest/usr/local/lib/sysusers.d/buddy.conf"
}
check "udev rule gives /dev/buddy to group buddy, sysusers creates it" udev_ok
if [ -n "$unit" ]; then
	unit_ok() {
		u=$dest/usr/local/lib/systemd/system/buddyd.service
		grep -q '^Type=notify' "$u" &&
		grep -q '^ExecStart=/usr/local/sbin/buddyd' "$u"
	}
	check "buddyd.service: Type=notify, ExecStart=/usr/local/sbin/buddyd" unit_ok
else
	n=$((n + 1)); skip=$((skip + 1))
	echo "ok $n buddyd.service # SKIP daemon/buddyd.service does not exist yet"
fi

if $make_cmd --no-print-directory uninstall DESTDIR="$dest" >"$work/uninstall.out" 2>&1; then
	ok "make uninstall DESTDIR=$dest"
else
	tail -30 "$work/uninstall.out" | comment
	nok "make uninstall DESTDIR=$dest"
fi
left=$(tree "$dest")
if [ -z "$left" ]; then
	ok "uninstall leaves no file"
else
	echo "$left" | comment
	nok "uninstall leaves no file"
fi

# ---- 2. PREFIX=/usr INSTALL_MODULE=no ---------------------------------------
if $make_cmd --no-print-directory install PREFIX=/usr INSTALL_MODULE=no \
	DESTDIR="$dest2" >"$work/install2.out" 2>&1; then
	ok "make install PREFIX=/usr INSTALL_MODULE=no"
else
	tail -30 "$work/install2.out" | comment
	nok "make install PREFIX=/usr INSTALL_MODULE=no"
fi
check "PREFIX=/usr: the same files under /usr, no module" same_tree "$dest2" usr
check "PREFIX=/usr: libbuddy.pc says prefix=/usr" \
	grep -qx 'prefix=/usr' "$dest2/usr/lib/pkgconfig/libbuddy.pc"
$make_cmd --no-print-directory uninstall PREFIX=/usr INSTALL_MODULE=no \
	DESTDIR="$dest2" >/dev/null 2>&1
left=$(tree "$dest2")
if [ -z "$left" ]; then
	ok "PREFIX=/usr: uninstall leaves no file"
else
	echo "$left" | comment
	nok "PREFIX=/usr: uninstall leaves no file"
fi

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
