#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Enforce who may include what (DESIGN.md "Layout", STYLE.md "Boundaries"):
#  - common/*.h include only <stdint.h> and <stddef.h>;
#  - vmm/ and guest/ never include each other's headers;
#  - guest/kernel/ includes only kernel/ headers, common/ headers and "arch.h" (kernel/main.c,
#    the boot sequence, may also call into drivers/ and apps/);
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

for f in guest/kernel/*.[ch]; do
	while read -r inc; do
		hdr=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$inc")
		case "$hdr" in
		kernel/*|arch.h) continue ;;
		esac
		if grep -qx "$hdr" <<<"$common_headers"; then
			continue
		fi
		if [ "$f" = guest/kernel/main.c ] && [[ "$hdr" == apps/* || "$hdr" == drivers/* ]]; then
			continue
		fi
		bad "$f" "includes \"$hdr\" (kernel/ may include kernel/, common/ and arch.h only)"
	done < <(grep -E '^\s*#\s*include\s*"' "$f")
done

# vmm/ and tools/: the modules' includes form no cycle. A module is foo.c with foo.h; an
# include is an arrow from the including file's module to the module of the header it names
# (resolved from the including file's folder; common/ and system headers are not modules).
# So a device that includes vm.h may not be included by vm.c, and a layer below the control
# plane never includes it: what calls upward does it through callbacks.
vmm_module_edges() {
	local f inc target
	for f in $(find vmm tools -name '*.[ch]' 2>/dev/null | sort); do
		while read -r inc; do
			target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
			[ -e "$target" ] || continue
			[ "${f%.[ch]}" = "${target%.[ch]}" ] || echo "${f%.[ch]} ${target%.[ch]}"
		done < <(sed -nE 's/^\s*#\s*include\s*"([^"]+)".*/\1/p' "$f")
	done
}
if ! loops=$(vmm_module_edges | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
	bad "vmm/" "modules include each other in a cycle (foo.c and foo.h are one module):"
	echo "$loops" >&2
fi

exit $fail
