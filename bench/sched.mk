# SPDX-License-Identifier: MIT
# Context switch, cross-CPU wake-up and local_lock costs in the guest (both builds, release
# and debug), in cycles; see bench/sched/run. SCHED_ARGS passes options, e.g. --runs 3.
BENCHES += sched

.PHONY: bench-sched
bench-sched: $(B)/plugvm
	$(Q)$(MAKE) DEBUG=0 guest guest-rt
	$(Q)$(MAKE) guest guest-rt
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/sched/run --plugvm $(B)/plugvm \
		--guest default=build/release/guest.elf --guest rt=build/release/rt/guest.elf \
		--guest default+lockdep=build/guest.elf --guest rt+lockdep=build/rt/guest.elf \
		$(SCHED_ARGS) | tee build/bench/sched.md
