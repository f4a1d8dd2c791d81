# SPDX-License-Identifier: MIT
# CPU hotplug: the engine's own cost (host, callgrind), offline/online cycles and serial vs
# parallel bring-up in the guest (release builds); see bench/cpuhp/run.
# CPUHP_ARGS passes options through, e.g. `make bench-cpuhp CPUHP_ARGS=--quick`.
BENCHES += cpuhp

# The engine walks the guest's own table (guest/kernel/cpuhp_table.c) with the unit test's
# fakes of its callbacks, each returning 0 (tests/unit/cpuhp_fakes.c with CPUHP_FAKES_NOP;
# the host arch.h from tests/unit/shim/).
CPUHP_BENCH_SRCS := bench/cpuhp/bench_engine.c guest/kernel/cpuhp_engine.c \
	guest/kernel/cpuhp_table.c tests/unit/cpuhp_fakes.c
build/bench/bench_cpuhp_engine: $(CPUHP_BENCH_SRCS) $(wildcard guest/kernel/*.h) \
		tests/unit/cpuhp_fakes.h tests/unit/shim/arch.h guest/arch/arch_api.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wmissing-prototypes -DPLUGVM_HOST_TEST \
		-DCPUHP_FAKES_NOP -Itests/unit/shim -Iguest -Icommon -I. -o $@ $(CPUHP_BENCH_SRCS)

.PHONY: bench-cpuhp
bench-cpuhp: $(B)/plugvm build/bench/bench_cpuhp_engine
	$(Q)$(MAKE) DEBUG=0 guest guest-rt
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/cpuhp/run --plugvm $(B)/plugvm \
		--guest build/release/guest.elf --guest-rt build/release/rt/guest.elf \
		--engine build/bench/bench_cpuhp_engine $(CPUHP_ARGS) | tee build/bench/cpuhp.md
