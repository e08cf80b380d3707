#!/bin/sh
# Print the kernel build tree of Debian's linux-headers-amd64 package: the
# 6.1 kernel the guest boots.  Never the running kernel's.
set -e
# KDIR= names another tree (the debug kernel of `make check-debug`).
if [ -n "${KDIR:-}" ]; then
	[ -f "$KDIR/Makefile" ] || { echo "kdir.sh: KDIR=$KDIR: no kernel build tree there" >&2; exit 1; }
	echo "$KDIR"
	exit 0
fi
ver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/.*linux-headers-\([0-9][^ ,]*-amd64\).*/\1/p')
[ -n "$ver" ] || { echo "kdir.sh: linux-headers-amd64 is not installed" >&2; exit 1; }
echo "/usr/src/linux-headers-$ver"
