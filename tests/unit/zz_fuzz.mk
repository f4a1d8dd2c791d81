# SPDX-License-Identifier: MIT
# Not a unit test: the top Makefile includes only tests/unit/*.mk fragments, so this one
# brings in the fuzzing targets (fuzz-build, fuzz-smoke, fuzz-seeds) from tests/fuzz/.
include tests/fuzz/fuzz.mk
