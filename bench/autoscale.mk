# SPDX-License-Identifier: MIT
# vCPUs on demand against static vCPU counts: the guest's bursts workload three ways (static
# min, static max, autoscaled) in one run, a table and a plot; see bench/autoscale/run.
# AUTOSCALE_ARGS passes options through, e.g. `make bench-autoscale AUTOSCALE_ARGS=--bursts=3`.
BENCHES += autoscale

.PHONY: bench-autoscale
bench-autoscale: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/autoscale/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(AUTOSCALE_ARGS) | tee build/bench/autoscale.md
