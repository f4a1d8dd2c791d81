# SPDX-License-Identifier: MIT
# The guest console through the 16550 and through virtio-console: throughput (bytes/s) and
# the boot time of a chatty guest; see bench/console/run.
BENCHES += console

.PHONY: bench-console
bench-console: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/console/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(CONSOLE_ARGS) | tee build/bench/console.md
