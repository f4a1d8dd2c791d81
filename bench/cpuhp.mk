# SPDX-License-Identifier: MIT
# CPU hotplug: the engine's own cost (host, callgrind), offline/online cycles and serial vs
# parallel bring-up in the guest (release builds); see bench/cpuhp/run.
# CPUHP_ARGS passes options through, e.g. `make bench-cpuhp CPUHP_ARGS=--quick`.
BENCHES += cpuhp

build/bench/bench_cpuhp_engine: bench/cpuhp/bench_engine.c guest/kernel/cpuhp_engine.c \
		guest/kernel/cpuhp_engine.h guest/kernel/cpuhp_states.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wmissing-prototypes -Iguest -Icommon \
		-o $@ bench/cpuhp/bench_engine.c guest/kernel/cpuhp_engine.c

.PHONY: bench-cpuhp
bench-cpuhp: $(B)/plugvm build/bench/bench_cpuhp_engine
	$(Q)$(MAKE) DEBUG=0 guest guest-rt
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/cpuhp/run --plugvm $(B)/plugvm \
		--guest build/release/guest.elf --guest-rt build/release/rt/guest.elf \
		--engine build/bench/bench_cpuhp_engine $(CPUHP_ARGS) | tee build/bench/cpuhp.md
