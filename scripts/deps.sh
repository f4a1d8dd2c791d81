#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages plugvm needs to build, test and benchmark. Idempotent and
# fast when everything is there (one dpkg-query). Usage: scripts/deps.sh [--check]
set -euo pipefail

PACKAGES=(
	# build
	gcc make libc6-dev linux-libc-dev binutils
	libjson-c-dev libxml2-dev libxml2-utils pkg-config libseccomp-dev
	# tests
	libcmocka-dev python3 python3-pytest socat util-linux procps time
	qemu-system-x86
	libvirt-daemon-system libvirt-clients
	# analysis, fuzzing, benchmarks, plots
	cppcheck clang clang-format universal-ctags libclang-rt-14-dev valgrind gnuplot-nox \
	acpica-tools rt-tests
)

# One dpkg-query; packages dpkg has never heard of are simply not listed as installed.
declare -A installed=()
while read -r pkg status; do
	[ "$status" = "installed" ] && installed["${pkg%%:*}"]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for pkg in "${PACKAGES[@]}"; do
	[ -n "${installed[$pkg]:-}" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "deps: missing: ${missing[*]}" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}" >&2
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: need root (or sudo) to install packages" >&2; exit 1; }
	SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# An image without package lists needs an update first; otherwise try without one.
if ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
	"${SUDO[@]}" apt-get update -q
	"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
