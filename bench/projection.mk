# SPDX-License-Identifier: MIT
# Guest instructions and VM exits per operation (boot, hot-add, offline+online, hot-remove)
# from KVM's statistics, and what they give on hardware KVM; see bench/projection/run.
# PROJECTION_ARGS passes options through, e.g. `make bench-projection PROJECTION_ARGS=--reps=3`.
BENCHES += projection

.PHONY: bench-projection
bench-projection: $(B)/plugvm guest build/bench/null_guest.elf
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/projection/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		--null-guest build/bench/null_guest.elf $(PROJECTION_ARGS) | tee build/bench/projection.md
