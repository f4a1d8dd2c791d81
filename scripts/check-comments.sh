#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Comments state what holds and name the test that guards it; how a race was found belongs
# in docs/reliability.md or the commit message (STYLE.md "Comments"). Refuses history tags
# in comment lines: "race N", "used to", "issue N", "this session", "was found".
# Scope: the guest, common/, the tests, scripts/, tools/ and vmm/cpus.c.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
files=$(git ls-files -co --exclude-standard -- guest common tests scripts tools vmm/cpus.c |
	grep -E '\.(c|h|S|py|sh|mk|ld)$' | grep -vE '^(tests/fuzz/corpus/|scripts/check-comments.sh$)')
[ -n "$files" ] || {
	echo "check-comments: no files (not a git checkout?)" >&2
	exit 1
}
# A comment line: //, /*, a block comment's *, #, or a Python docstring's opening.
comment='^\s*(//|/\*|\*|#|""")'
history='\b[Rr]ace [0-9]|\bused to\b|\b[Ii]ssue #?[0-9]|\bthis session\b|\bwas found\b'
# shellcheck disable=SC2086
if hits=$(grep -nE "$comment.*($history)" $files); then
	echo "$hits" >&2
	echo "check-comments: history in comments above: state the invariant and its test" >&2
	exit 1
fi
exit 0
