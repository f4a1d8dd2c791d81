#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Enforce who may include what (docs/design.md "Rules of the house", docs/architecture.md):
#  - common/*.h include only <stdint.h> and <stddef.h>;
#  - vmm/ and guest/ never include each other's headers;
#  - the guest is layered kernel/ <- arch/ <- drivers/ <- apps/ <- init/ (each may include
#    what is left of it, never what is right of it), and only arch/ sees the arch's own
#    headers:
#      guest/kernel/   kernel/, common/ and "arch.h";
#      guest/arch/     arch_api.h, the arch's functions: nothing of the guest's;
#      guest/arch/x86/ kernel/, common/, arch/arch_api.h and its own headers (never drivers/
#                      or apps/);
#      guest/drivers/  kernel/, drivers/, common/ and "arch.h" (never apps/, x86.h, ...);
#      guest/apps/     kernel/, drivers/, apps/, common/ and "arch.h";
#      guest/init/     kernel/, drivers/, apps/, init/, common/ and "arch.h" (the boot
#                      sequence, which calls into every layer).
#  - the arch API's functions are declared once, in guest/arch/arch_api.h: the arch.h of the
#    guest and of the host unit tests (tests/unit/shim/) declare none of their own;
#  - tools/: a tool (tools/NAME/) includes its own headers, the client library (tools/lib/),
#    common/ and, of the VMM's, only vmm/version.h and vmm/utf8.h; the library includes
#    the same but never a tool's headers;
#  - every tests/unit/*.mk, which the Makefile includes by wildcard, is a unit test's;
#  - vmm/ and tools/: no include cycle between modules (vmm_module_cycles below).
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
bad() {
	echo "check-includes: $1: $2" >&2
	fail=1
}

common_headers=$(cd common && ls *.h)

for f in common/*.h; do
	if grep -nE '^\s*#\s*include' "$f" | grep -vE '<(stdint|stddef)\.h>'; then
		bad "$f" "common/ headers include only <stdint.h> and <stddef.h>"
	fi
done

for f in $(find vmm -name '*.[ch]'); do
	if grep -nE '^\s*#\s*include\s*"[^"]*(guest/|kernel/|drivers/|apps/|arch\.h)' "$f"; then
		bad "$f" "vmm/ must not include guest headers"
	fi
done

for f in $(find guest -name '*.[chS]'); do
	if grep -nE '^\s*#\s*include\s*"[^"]*vmm/' "$f"; then
		bad "$f" "guest/ must not include vmm headers"
	fi
done

arch_headers=$(cd guest/arch/x86 && ls *.h)

# Every guest source is in one of the layers below, so that a rule covers it.
layers='^guest/(kernel|arch|arch/x86|drivers|apps|init)/[^/]+$'
for f in $(find guest -name '*.[chS]' | grep -vE "$layers"); do
	bad "$f" "is in no guest layer (kernel/, arch/, arch/x86/, drivers/, apps/, init/)"
done

# An arch.h declares no function (a line that starts a declaration of arch_NAME( and is
# not a static inline definition): arch/arch_api.h declares them for both.
for f in guest/arch/x86/arch.h tests/unit/shim/arch.h; do
	if grep -nE '^[a-z_].*\barch_[a-z0-9_]+\(' "$f" | grep -v 'static inline'; then
		bad "$f" "declares arch functions of its own (they belong in guest/arch/arch_api.h)"
	fi
done

# guest_layer FOLDER DESCRIPTION PATTERN...: every quoted include of FOLDER's files must
# match one of the shell patterns, or be a common/ header.
guest_layer() {
	local dir=$1 what=$2 f inc hdr pat ok
	shift 2
	for f in $(find "$dir" -maxdepth 1 -name '*.[chS]'); do
		while read -r inc; do
			hdr=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$inc")
			ok=0
			for pat in "$@"; do
				# shellcheck disable=SC2254
				case "$hdr" in
				$pat) ok=1 ;;
				esac
			done
			if grep -qx "$hdr" <<<"$common_headers"; then
				ok=1
			fi
			[ $ok = 1 ] || bad "$f" "includes \"$hdr\" ($what)"
		done < <(grep -E '^\s*#\s*include\s*"' "$f")
	done
}

guest_layer guest/kernel "kernel/ may include kernel/, common/ and arch.h only" 'kernel/*' arch.h
guest_layer guest/arch "arch/arch_api.h includes no guest header"
# shellcheck disable=SC2086
guest_layer guest/arch/x86 \
	"arch/ may include kernel/, common/, arch/arch_api.h and its own headers only" \
	'kernel/*' arch/arch_api.h $arch_headers
guest_layer guest/drivers "drivers/ may include kernel/, drivers/, common/ and arch.h only" \
	'kernel/*' 'drivers/*' arch.h
guest_layer guest/apps "apps/ may include kernel/, drivers/, apps/, common/ and arch.h only" \
	'kernel/*' 'drivers/*' 'apps/*' arch.h
guest_layer guest/init "init/ may include kernel/, drivers/, apps/, init/, common/ and arch.h only" \
	'kernel/*' 'drivers/*' 'apps/*' 'init/*' arch.h

# The Makefile includes every tests/unit/*.mk as a unit test's fragment: each declares one.
for f in tests/unit/*.mk; do
	grep -qE '^UNIT_TESTS \+=' "$f" || bad "$f" "declares no unit test (UNIT_TESTS += ...)"
done

# tools/: who may include what. A header is named relative to the including file's folder
# ("conn.h" in tools/lib/, "latency.h" in tools/latency/) or to the top of the tree (-I.).
tools_rule="tools include their own folder, tools/lib/, common/, vmm/version.h, vmm/utf8.h"
for f in $(find tools -name '*.[ch]' | sort); do
	dir=$(dirname "$f")
	while read -r hdr; do
		case "$hdr" in
		*..*) ;;
		tools/lib/*.h | vmm/version.h | vmm/utf8.h | "$dir"/*.h) continue ;;
		*/*) ;;
		*)
			if [ -e "$dir/$hdr" ] || grep -qx "$hdr" <<<"$common_headers"; then
				continue
			fi
			;;
		esac
		bad "$f" "includes \"$hdr\" ($tools_rule)"
	done < <(sed -nE 's/^\s*#\s*include\s*"([^"]+)".*/\1/p' "$f")
done

# vmm/ and tools/: the modules' includes form no cycle. A module is foo.c with foo.h (and
# foo_internal.h, the state it shares with its own helper files, as cpus_internal.h); an
# include is an arrow from the including file's module to the module of the header it names
# (resolved from the including file's folder, else from the top of the tree as -I. does;
# common/ and system headers are not modules).
# So a device that includes vm.h may not be included by vm.c, and a layer below the control
# plane never includes it: what calls upward does it through callbacks.
vmm_module_edges() {
	local f inc target from to
	for f in $(find vmm tools -name '*.[ch]' 2>/dev/null | sort); do
		from=${f%.[ch]}
		from=${from%_internal}
		while read -r inc; do
			target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
			[ -e "$target" ] || target=$(realpath -m --relative-to=. "$inc")
			[ -e "$target" ] || continue
			to=${target%.[ch]}
			to=${to%_internal}
			[ "$from" = "$to" ] || echo "$from $to"
		done < <(sed -nE 's/^\s*#\s*include\s*"([^"]+)".*/\1/p' "$f")
	done
}
if ! loops=$(vmm_module_edges | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
	bad "vmm/" "modules include each other in a cycle (foo.c and foo.h are one module):"
	echo "$loops" >&2
fi

exit $fail
