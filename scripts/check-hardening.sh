#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that each host program (ELF, built with the Makefile's HOST_CFLAGS/HOST_LDFLAGS)
# carries its hardening: PIE, full RELRO, the stack protector, fortified libc calls and CET
# (IBT and shadow stack). Usage: scripts/check-hardening.sh BINARY...; one line per missing
# property, status 1 if any is missing.
#
# CET: the linker marks an executable IBT/SHSTK only if every object in it is marked, the C
# library's start files (crti.o) included. Where those carry no mark (Debian 12's glibc is
# built without CET), every C unit of the program is checked for -fcf-protection=full in
# its DW_AT_producer instead, and a note says why.
set -euo pipefail

CC=${CC:-gcc}
fail=0

missing() {
	echo "check-hardening: $1: $2" >&2
	fail=1
}

# The flags of each C compilation unit in $1, one line each (gcc's -grecord-gcc-switches).
producers() {
	readelf --debug-dump=info "$1" 2>/dev/null |
		sed -n 's/.*DW_AT_producer *: *\(([^)]*): *\)\{0,1\}\(GNU C.*\)/\2/p'
}

start_files_marked() {
	readelf -n "$("$CC" -print-file-name=crti.o)" 2>/dev/null | grep -q 'x86 feature: IBT, SHSTK'
}

[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
for bin in "$@"; do
	if [ ! -f "$bin" ]; then
		missing "$bin" "no such file"
		continue
	fi
	header=$(readelf -hW "$bin")
	dynamic=$(readelf -dW "$bin")
	segments=$(readelf -lW "$bin")
	dynsyms=$(readelf --dyn-syms -W "$bin")
	notes=$(readelf -nW "$bin")

	grep -q 'Type: *DYN' <<<"$header" || missing "$bin" "not PIE (ELF type is not DYN)"
	grep -q 'FLAGS_1.*PIE' <<<"$dynamic" || missing "$bin" "not PIE (no DF_1_PIE in FLAGS_1)"
	grep -q 'GNU_RELRO' <<<"$segments" || missing "$bin" "no RELRO (no GNU_RELRO segment)"
	grep -Eq 'BIND_NOW|FLAGS_1.*NOW' <<<"$dynamic" ||
		missing "$bin" "partial RELRO only (no BIND_NOW: link with -z now)"
	grep -q ' __stack_chk_fail' <<<"$dynsyms" ||
		missing "$bin" "no stack protector (__stack_chk_fail not imported)"
	grep -Eq ' __[a-z0-9_]+_chk(@|$)' <<<"$(grep -v __stack_chk_fail <<<"$dynsyms")" ||
		missing "$bin" "not fortified (no __*_chk libc call: -D_FORTIFY_SOURCE=2 with -O1+)"

	units=$(producers "$bin")
	if [ -z "$units" ]; then
		missing "$bin" "no DWARF producer records (built without -g?): cannot check its units"
		continue
	fi
	unprotected=$(grep -cv -- '-fstack-protector-strong' <<<"$units" || true)
	[ "$unprotected" -eq 0 ] ||
		missing "$bin" "$unprotected C units built without -fstack-protector-strong"
	if ! grep -q 'x86 feature: IBT, SHSTK' <<<"$notes"; then
		if start_files_marked; then
			missing "$bin" "no IBT/SHSTK property note (build with -fcf-protection=full)"
		else
			uncet=$(grep -Ecv -- '-fcf-protection(=full)?( |$)' <<<"$units" || true)
			if [ "$uncet" -ne 0 ]; then
				missing "$bin" "$uncet C units built without -fcf-protection=full"
			else
				echo "check-hardening: $bin: note: no IBT/SHSTK mark: the C library's" \
					"start files have none, so the linker drops it; all" \
					"$(wc -l <<<"$units") C units built with -fcf-protection=full"
			fi
		fi
	fi
done
exit $fail
