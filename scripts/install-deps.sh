#!/bin/sh
# Install every Debian package the build, tests, benchmarks and demo use:
# the "package" lines of scripts/deps.manifest (which also names the host
# program of each, checked by `make check-ci`).
# Idempotent: installs only what is missing.
set -e
manifest=$(dirname "$0")/deps.manifest
PKGS=$(sed -n 's/^package[[:space:]]\{1,\}\([^[:space:]#]\{1,\}\).*/\1/p' "$manifest")
[ -n "$PKGS" ] || { echo "install-deps: no package lines in $manifest" >&2; exit 1; }
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
