# SPDX-License-Identifier: MIT
# The guest's timer wheel against a binary heap on the host: ns/op tables and callgrind
# instruction counts; see bench/wheel/run. WHEEL_ARGS=--quick for a short run.
BENCHES += wheel

build/bench/bench_wheel: bench/wheel/bench_wheel.c bench/wheel/heap.c bench/wheel/heap.h \
		guest/kernel/timer_wheel.c guest/kernel/timer_wheel.h tests/unit/splitmix.h
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -Iguest -Icommon -Ibench/wheel -I. -o $@ \
		bench/wheel/bench_wheel.c bench/wheel/heap.c guest/kernel/timer_wheel.c

.PHONY: bench-wheel
bench-wheel: build/bench/bench_wheel
	@mkdir -p build/bench
	$(Q)set -o pipefail; bash bench/wheel/run build/bench/bench_wheel $(WHEEL_ARGS) | \
		tee build/bench/wheel.md
