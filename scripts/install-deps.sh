#!/bin/sh
# Install every Debian package the build, tests, benchmarks and demo use.
# Idempotent: installs only what is missing.
set -e
PKGS="build-essential clang llvm libclang-rt-14-dev pkg-config
 linux-headers-amd64 linux-source-6.1 qemu-system-x86 busybox-static cpio
 libjson-c-dev liblz4-dev libzstd-dev libnuma-dev liburing-dev libpng-dev
 libsystemd-dev python3 python3-docutils xz-utils kmod perl
 tesseract-ocr-eng dataset-fashion-mnist python3-numpy python3-torch"
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
