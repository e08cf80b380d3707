#!/bin/sh
# Print the kernel build tree of Debian's linux-headers-amd64 package: the
# 6.1 kernel the guest boots.  Never the running kernel's.
set -e
ver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/.*linux-headers-\([0-9][^ ,]*-amd64\).*/\1/p')
[ -n "$ver" ] || { echo "kdir.sh: linux-headers-amd64 is not installed" >&2; exit 1; }
echo "/usr/src/linux-headers-$ver"
