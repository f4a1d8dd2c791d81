#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Comments state what holds and name the test that guards it; how a race was found belongs
# in docs/reliability.md or the commit message (STYLE.md "Comments"). Refuses history tags
# in comment lines: "race N", "used to", "issue N", "this session", "was found"; and in
# vmm/, measurements ("~70 us", "10-18 ms"), which belong in bench/README.md or
# docs/design.md. A unit in a constant's contract ("a 10 s deadline") is no measurement.
# Scope: the guest, common/, the tests, scripts/, tools/ and vmm/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
files=$(git ls-files -co --exclude-standard -- guest common tests scripts tools vmm |
	grep -E '\.(c|h|S|py|sh|mk|ld)$' |
	grep -vE '^(tests/fuzz/corpus/|scripts/check-comments.sh$)')
[ -n "$files" ] || {
	echo "check-comments: no files (not a git checkout?)" >&2
	exit 1
}
# A comment line: //, /*, a block comment's *, #, or a Python docstring's opening.
comment='^\s*(//|/\*|\*|#|""")'
history='\b[Rr]ace [0-9]|\bused to\b|\b[Ii]ssue #?[0-9]|\bthis session\b|\bwas found\b'
status=0
# shellcheck disable=SC2086
if hits=$(grep -nE "$comment.*($history)" $files); then
	echo "$hits" >&2
	echo "check-comments: history in comments above: state the invariant and its test" >&2
	status=1
fi
vmm_files=$(grep '^vmm/' <<<"$files")
# In C, a comment anywhere on the line (a trailing one included).
c_comment='(/\*|//|^\s*\*)'
# An approximate figure ("~0.3 ms") or a measured range ("10-18 ms").
measure='~[0-9.]+ ?(ns|us|µs|ms|s)\b|\b[0-9.]+-[0-9.]+ ?(ns|us|µs|ms)\b'
# shellcheck disable=SC2086
if hits=$(grep -nE "$c_comment.*($measure)" $vmm_files); then
	echo "$hits" >&2
	echo "check-comments: a measurement in comments above: put it in bench/README.md or" \
		"docs/design.md, state the invariant here" >&2
	status=1
fi
exit $status
