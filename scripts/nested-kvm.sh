#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Run a command where this host has no /dev/kvm: in a QEMU VM (TCG) whose emulated CPU has
# AMD SVM with nested paging, so that Debian's own kernel there loads kvm_amd and has a real
# /dev/kvm. plugvm, QEMU and libvirt then run on that KVM as on any other; nothing is mocked.
# For hosts without /dev/kvm (a kvm_pvm guest, where kvm_pvm does not bind): `make
# NESTED_KVM=1 integration` and the other targets under the Makefile's ON_KVM come here
# (README "Tests": what this VM cannot be trusted with).
#
#   scripts/nested-kvm.sh prepare      fetch Debian's kernel and busybox (apt-get download),
#                                      build build/nested-kvm/{vmlinuz,initrd.img}; idempotent
#   scripts/nested-kvm.sh run CMD [ARG]...
#                                      prepare, boot, run CMD with its arguments as root in
#                                      this repository, stream its output, exit with its
#                                      status (`run sh -c '...'` for a shell command)
#
# In the VM: the host's / read-only (9p) under a tmpfs overlay, so the host's packages are
# there and writes outside the repository stay in the VM; this repository read-write at its
# own path, and PLUGVM_NESTED_TCG=1 in the command's environment (tests skip there what this
# emulator cannot run: conftest.py's nested_tcg_breaks). The caller's environment is not
# passed: run `env VAR=value CMD ...`.
# Env: NESTED_KVM_MEM (default 6G), NESTED_KVM_SMP (default 2), NESTED_KVM_TIMEOUT (seconds,
# default 0: none), NESTED_KVM_KEEP=1 keeps build/nested-kvm/runs/ID after a success.
# Exit status: CMD's; 125 when the VM stopped without one (its console's tail is printed).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
DIR=$REPO/build/nested-kvm
MODULES=(virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
	 netfs fscache 9pnet 9pnet_virtio 9p overlay irqbypass ccp kvm kvm-amd)

die() { echo "nested-kvm: $*" >&2; exit 1; }

# Download one Debian package's .deb into $DIR/deb (package lists updated once if needed).
fetch() {
	local pkg=$1
	ls "$DIR/deb/${pkg}"_*.deb > /dev/null 2>&1 && return 0
	mkdir -p "$DIR/deb"
	(cd "$DIR/deb" && apt-get download -q "$pkg" > /dev/null 2>&1) || {
		apt-get update -q > /dev/null
		(cd "$DIR/deb" && apt-get download -q "$pkg") || die "cannot download $pkg"
	}
}

# The versioned package Debian's linux-image-amd64 stands for ("" without package lists).
kernel_package() {
	apt-cache depends linux-image-amd64 2> /dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

prepare() {
	local image ver root=$DIR/root init=$DIR/initrd m f
	command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 missing (scripts/deps.sh)"
	if [ ! -s "$DIR/vmlinuz" ] || [ ! -x "$init/bin/busybox" ]; then
		image=$(kernel_package)
		if [ -z "$image" ]; then
			apt-get update -q > /dev/null
			image=$(kernel_package)
		fi
		[ -n "$image" ] || die "no Debian kernel package (apt-cache depends linux-image-amd64)"
		echo "nested-kvm: preparing the VM from Debian's $image and busybox-static" >&2
		fetch "$image"
		fetch busybox-static
		rm -rf "$root" "$init"
		mkdir -p "$root" "$init"/{bin,dev,proc,sys,newroot,lib/modules}
		dpkg-deb -x "$(ls "$DIR/deb/${image}"_*.deb | head -1)" "$root"
		dpkg-deb -x "$(ls "$DIR/deb/busybox-static"_*.deb | head -1)" "$root/bb"
		ver=$(ls "$root/lib/modules" | head -1)
		cp "$root/bb/bin/busybox" "$init/bin/busybox"
		mkdir -p "$init/lib/modules/$ver"
		for m in "${MODULES[@]}"; do
			# Built in, in some kernel, is as good: modprobe then finds nothing to load.
			f=$(find "$root/lib/modules/$ver/kernel" -name "$m.ko*" | head -1)
			[ -n "$f" ] || continue
			case "$f" in
			*.xz) xz -dc "$f" > "$init/lib/modules/$ver/$m.ko" ;;
			*.zst) zstd -dqc "$f" > "$init/lib/modules/$ver/$m.ko" ;;
			*) cp "$f" "$init/lib/modules/$ver/$m.ko" ;;
			esac
		done
		cp "$root/boot/vmlinuz-$ver" "$DIR/vmlinuz"
		rm -rf "$root" "$DIR/initrd.img"
	fi
	# The init below is part of this script: a newer script makes a new initrd.
	if [ ! -s "$DIR/initrd.img" ] || [ "$0" -nt "$DIR/initrd.img" ]; then
		write_init > "$init/init"
		chmod 0755 "$init/init"
		(cd "$init" && find . | "$init/bin/busybox" cpio -o -H newc 2> /dev/null | gzip -1) \
			> "$DIR/initrd.img.new"
		mv "$DIR/initrd.img.new" "$DIR/initrd.img"
	fi
}

# PID 1 of the VM.
write_init() {
	cat << 'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "nested-kvm: $*" > /dev/console; }
die() { say "FATAL: $*"; poweroff -f; sleep 5; }
for w in $(cat /proc/cmdline); do
	case "$w" in nk.id=*) ID=${w#nk.id=} ;; nk.repo=*) REPO=${w#nk.repo=} ;; esac
done
depmod
for m in virtio_pci 9pnet_virtio 9p overlay; do modprobe $m || say "modprobe $m failed"; done
mkdir -p /lower /ovl
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro host /lower ||
	die "cannot mount the host's /"
mount -t tmpfs -o size=3g,mode=0755 tmpfs /ovl
mkdir -p /ovl/u /ovl/w
mount -t overlay -o lowerdir=/lower,upperdir=/ovl/u,workdir=/ovl/w overlay /newroot ||
	die "cannot mount the overlay"
R=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap repo "$R$REPO" ||
	die "cannot mount the repository"
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
ln -sf /proc/self/fd $R/dev/fd
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=0755 tmpfs $R/run
mkdir -p -m 1777 $R/run/lock # /var/lock: virsh console's lock files
RUN=$REPO/build/nested-kvm/runs/$ID
[ -f "$R$RUN/cmd" ] || die "no command $RUN/cmd"
modprobe kvm_amd > "$R$RUN/kvm.log" 2>&1 || say "modprobe kvm_amd failed"
[ -c /dev/kvm ] || die "no /dev/kvm: $(cat "$R$RUN/kvm.log")"
ifconfig lo 127.0.0.1 up
say "running $ID"
HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	PLUGVM_NESTED_TCG=1 chroot $R /bin/bash -c "cd '$REPO' && exec /bin/bash '$RUN/cmd'" \
	< /dev/null > "$R$RUN/output" 2>&1
echo $? > "$R$RUN/status"
sync
umount "$R$REPO"
poweroff -f
EOF
}

run() {
	local id run qpid tpid start rc
	case "$REPO" in *[[:space:]]*) die "the repository's path has a space: $REPO" ;; esac
	prepare
	id=$(date +%Y%m%d-%H%M%S)-$$
	run=$DIR/runs/$id
	mkdir -p "$run"
	printf '%q ' "$@" > "$run/cmd"
	echo >> "$run/cmd"
	: > "$run/output"
	echo "nested-kvm: no /dev/kvm here: running in a nested-KVM VM ($run)" >&2
	qemu-system-x86_64 \
		-M q35 -accel tcg,thread=multi -cpu qemu64,+svm,+npt \
		-smp "${NESTED_KVM_SMP:-2}" -m "${NESTED_KVM_MEM:-6G}" \
		-display none -no-reboot -nodefaults -serial "file:$run/console.log" \
		-kernel "$DIR/vmlinuz" -initrd "$DIR/initrd.img" \
		-append "console=ttyS0 loglevel=4 panic=-1 clocksource=tsc tsc=reliable ${NESTED_KVM_APPEND:-} nk.id=$id nk.repo=$REPO" \
		-virtfs local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap,id=h \
		-virtfs "local,path=$REPO,mount_tag=repo,security_model=passthrough,multidevs=remap,id=r" \
		> "$run/qemu.log" 2>&1 &
	qpid=$!
	trap 'kill $qpid 2> /dev/null' INT TERM HUP EXIT
	tail -n +1 -f --pid=$qpid "$run/output" &
	tpid=$!
	start=$(date +%s)
	while kill -0 $qpid 2> /dev/null; do
		if [ "${NESTED_KVM_TIMEOUT:-0}" -gt 0 ] &&
			[ $(($(date +%s) - start)) -ge "$NESTED_KVM_TIMEOUT" ]; then
			echo "nested-kvm: timeout after ${NESTED_KVM_TIMEOUT}s: stopping the VM" >&2
			kill $qpid
			break
		fi
		sleep 1
	done
	wait $qpid 2> /dev/null || true
	wait $tpid 2> /dev/null || true
	trap - INT TERM HUP EXIT
	if [ ! -s "$run/status" ]; then
		echo "nested-kvm: the VM stopped without the command's status; its console:" >&2
		tail -n 40 "$run/console.log" >&2
		cat "$run/qemu.log" >&2
		return 125
	fi
	rc=$(cat "$run/status")
	[ "${NESTED_KVM_KEEP:-0}" = 1 ] || [ "$rc" != 0 ] || rm -rf "$run"
	return "$rc"
}

case "${1:-}" in
prepare) prepare ;;
run)
	shift
	[ $# -ge 1 ] || die "usage: $0 run CMD [ARG]..."
	run "$@"
	;;
*) die "usage: $0 prepare | run CMD [ARG]..." ;;
esac
