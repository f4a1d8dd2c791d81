# SPDX-License-Identifier: MIT
# Resident memory of an idle 2-vCPU VM (Rss, anonymous, file, largest mappings): plugvm, plugvm
# from a domain document, QEMU 7.2 microvm and pc with the same guest; see bench/memory/run.
# MEMORY_BENCH_ARGS passes options through, e.g. `make bench-memory MEMORY_BENCH_ARGS=--reps=9`.
BENCHES += memory

.PHONY: bench-memory
bench-memory: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/memory/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(MEMORY_BENCH_ARGS) | tee build/bench/memory.md
