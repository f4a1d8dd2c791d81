#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Make libvirt 9.0's QEMU driver run on a plain Debian 12 machine without systemd, as root
# (the steps of DEVELOPERS.md, "libvirt without systemd"), and start its daemons.
#   scripts/libvirt-setup.sh start   configure (idempotent), start virtlogd and libvirtd if
#                                    they are not running, wait for the socket; prints and
#                                    records the PIDs it started in $STATE
#   scripts/libvirt-setup.sh stop    stop only the daemons a `start` recorded
# Needs root and the packages of scripts/deps.sh (libvirt-daemon-system, libvirt-clients).
set -euo pipefail

STATE=${PLUGVM_LIBVIRT_STATE:-/run/plugvm-libvirt.started}
CONF=/etc/libvirt/qemu.conf
SOCK=/var/run/libvirt/libvirt-sock

die() { echo "libvirt-setup.sh: $*" >&2; exit 1; }

set_key() { # KEY VALUE: one uncommented `KEY = VALUE` line in qemu.conf
	sed -i -e "/^[[:space:]]*$1[[:space:]]*=/d" "$CONF"
	echo "$1 = $2" >>"$CONF"
}

configure() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	command -v libvirtd >/dev/null || die "libvirtd not installed (run scripts/deps.sh)"
	command -v virsh >/dev/null || die "virsh not installed (run scripts/deps.sh)"
	[ -f "$CONF" ] || die "$CONF missing (libvirt-daemon-system not installed?)"
	getent group kvm >/dev/null || groupadd -r kvm
	getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
	id libvirt-qemu >/dev/null 2>&1 ||
		useradd -r -g kvm -G libvirt-qemu -s /usr/sbin/nologin libvirt-qemu
	getent group swtpm >/dev/null || groupadd -r swtpm
	id swtpm >/dev/null 2>&1 || useradd -r -g swtpm -s /usr/sbin/nologin swtpm
	usermod -a -G kvm,libvirt-qemu libvirt-qemu
	usermod -a -G kvm,libvirt-qemu swtpm
	set_key user '"root"'
	set_key group '"root"'
	set_key security_driver '"none"'
	set_key dynamic_ownership 0
	set_key remember_owner 0
	set_key cgroup_controllers '[ ]'
	# In scripts/nested-kvm.sh's VM (a chroot over an overlay, /dev a devtmpfs mounted in
	# it) the /dev that libvirt builds in the emulator's mount namespace lacks /dev/kvm.
	if [ "${PLUGVM_NESTED_TCG:-}" = 1 ]; then
		set_key namespaces '[ ]'
	else
		sed -i -e "/^[[:space:]]*namespaces[[:space:]]*=/d" "$CONF"
	fi
	mkdir -p /var/log/libvirt/qemu /var/run/libvirt /var/lib/libvirt/qemu
}

start() {
	configure
	: >"$STATE.new"
	if ! pgrep -x virtlogd >/dev/null; then
		virtlogd -d -p /var/run/virtlogd.pid
		for _ in $(seq 100); do [ -s /var/run/virtlogd.pid ] && break; sleep 0.1; done
		echo "virtlogd $(cat /var/run/virtlogd.pid)" | tee -a "$STATE.new"
	fi
	if ! pgrep -x libvirtd >/dev/null; then
		rm -f /var/run/libvirtd.pid
		libvirtd -d -p /var/run/libvirtd.pid
		for _ in $(seq 100); do [ -s /var/run/libvirtd.pid ] && break; sleep 0.1; done
		echo "libvirtd $(cat /var/run/libvirtd.pid)" | tee -a "$STATE.new"
	fi
	# Append to what an earlier start recorded (a second start starts nothing new).
	cat "$STATE.new" >>"$STATE"
	rm -f "$STATE.new"
	for _ in $(seq 300); do
		[ -S "$SOCK" ] && virsh -c qemu:///system version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "libvirtd did not answer on $SOCK within 30 s (see /var/log/libvirt/)"
}

stop() {
	[ -f "$STATE" ] || return 0
	# libvirtd first (it talks to virtlogd), each only if it is still the process we started.
	for name in libvirtd virtlogd; do
		while read -r n pid; do
			[ "$n" = "$name" ] || continue
			if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ]; then
				kill "$pid"
				for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			fi
		done <"$STATE"
	done
	rm -f "$STATE"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
