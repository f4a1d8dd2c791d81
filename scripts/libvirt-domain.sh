#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Print a configs/libvirt/ example with this tree's paths in place of the installed ones
# (libvirt's schema, and libvirtd, want absolute paths): <kernel> becomes KERNEL, default
# build/guest.elf (build/rt/guest.elf where the example names the RT guest, guest-rt.elf);
# an <emulator> naming plugvm-qemu becomes build/plugvm-qemu; NAME, if given, the <name>.
# Usage: scripts/libvirt-domain.sh FILE.xml [NAME] [KERNEL]
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] && [ $# -le 3 ] || { echo "usage: $0 FILE.xml [NAME] [KERNEL]" >&2; exit 2; }
file="$1"
name="${2:-}"
[ -r "$file" ] || { echo "$0: $file: not readable" >&2; exit 2; }
if grep -q '<kernel>[^<]*/guest-rt\.elf</kernel>' "$file"; then
	kernel="${3:-$here/build/rt/guest.elf}"
else
	kernel="${3:-$here/build/guest.elf}"
fi
case "$kernel" in /*) ;; *) kernel="$PWD/$kernel" ;; esac
grep -q '<kernel>' "$file" || { echo "$0: $file: no <kernel> element" >&2; exit 2; }
sed -e "s|<kernel>[^<]*</kernel>|<kernel>$kernel</kernel>|" \
	-e "s|<emulator>[^<]*/plugvm-qemu</emulator>|<emulator>$here/build/plugvm-qemu</emulator>|" \
	${name:+-e "s|<name>[^<]*</name>|<name>$name</name>|"} \
	${name:+-e "s|/plugvm-guest\.serial\.log|/$name.serial.log|g"} "$file"
