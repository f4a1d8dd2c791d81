#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Print a configs/libvirt/ example with this tree's absolute build/guest.elf as <kernel>
# (libvirt's schema, and libvirtd, want an absolute path) and, if given, NAME as <name>.
# Usage: scripts/libvirt-domain.sh FILE.xml [NAME] [KERNEL]
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] && [ $# -le 3 ] || { echo "usage: $0 FILE.xml [NAME] [KERNEL]" >&2; exit 2; }
file="$1"
name="${2:-}"
kernel="${3:-$here/build/guest.elf}"
[ -r "$file" ] || { echo "$0: $file: not readable" >&2; exit 2; }
case "$kernel" in /*) ;; *) kernel="$PWD/$kernel" ;; esac
grep -q '<kernel>' "$file" || { echo "$0: $file: no <kernel> element" >&2; exit 2; }
sed -e "s|<kernel>[^<]*</kernel>|<kernel>$kernel</kernel>|" \
	${name:+-e "s|<name>[^<]*</name>|<name>$name</name>|"} \
	${name:+-e "s|/plugvm-guest\.serial\.log|/$name.serial.log|g"} "$file"
