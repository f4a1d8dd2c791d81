# Boot time: plugvm beside QEMU (pc, microvm) and a raw-KVM floor, in one run; see
# bench/boot/run. BOOT_ARGS passes options through, e.g. `make bench-boot BOOT_ARGS=--quick`.
BENCHES += boot
# The guest image `make` builds (build/guest.elf; the top Makefile may move it with
# GUEST_PREFIX); override with BOOT_GUEST=FILE.
BOOT_GUEST ?= $(or $(GUEST_PREFIX),build)/guest.elf

build/bench/kvm_floor: bench/boot/kvm_floor.c
	@mkdir -p $(@D)
	@echo "  CCLD    $@"
	$(Q)gcc -O2 -Wall -Wextra -Werror -pthread -o $@ $<

build/bench/null_guest.elf: bench/boot/null_guest.S bench/boot/null_guest.ld
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)gcc -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack \
		-Wl,-T,bench/boot/null_guest.ld -o $@ bench/boot/null_guest.S

.PHONY: bench-boot
bench-boot: $(B)/plugvm $(BOOT_GUEST) build/bench/kvm_floor build/bench/null_guest.elf
	@mkdir -p build/bench
	$(Q)set -o pipefail; /usr/bin/python3 bench/boot/run --kernel $(BOOT_GUEST) $(BOOT_ARGS) \
		| tee build/bench/boot.md
