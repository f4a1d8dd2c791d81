#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boot the plugvm guest on stock QEMU/KVM (the `pc` machine unless told), console on stdio.
# Usage: scripts/run-qemu.sh [--machine pc|q35|microvm] [-smp N[,maxcpus=M]] [-m SIZE] [--append "CMDLINE"]
#        [--kernel FILE] [--qmp PATH] [-- extra QEMU arguments]
# Exit status follows QEMU: 0 after ACPI power-off, (v << 1) | 1 after isa-debug-exit v.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
machine=pc
smp=4
mem=128M
append=""
kernel="$here/build/guest.elf"
qmp=()
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	-machine | --machine) machine="$2"; shift 2 ;;
	-smp | --smp) smp="$2"; shift 2 ;;
	-m | --memory) mem="$2"; shift 2 ;;
	-append | --append) append="$2"; shift 2 ;;
	-kernel | --kernel) kernel="$2"; shift 2 ;;
	--qmp) qmp=(-qmp "unix:$2,server=on,wait=off"); shift 2 ;;
	--) shift; extra=("$@"); break ;;
	*) echo "run-qemu.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -r "$kernel" ] || { echo "run-qemu.sh: $kernel: not found (run make)" >&2; exit 2; }

exec qemu-system-x86_64 \
	-machine "$machine",accel=kvm -cpu host,-arch-capabilities \
	-smp "$smp" -m "$mem" \
	-kernel "$kernel" -append "$append" \
	-nodefaults -no-reboot -display none -monitor none -serial stdio \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	"${qmp[@]}" "${extra[@]}"
