# SPDX-License-Identifier: MIT
# Wake-up latency: build/plugvm-latency over both guests and four loads, beside rt-tests'
# cyclictest on the host; see bench/latency/run.
BENCHES += latency

.PHONY: bench-latency
bench-latency: $(B)/plugvm-latency $(B)/plugvm guest guest-rt
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/latency/run --tool $(B)/plugvm-latency $(LATENCY_ARGS) \
		| tee build/bench/latency.md
