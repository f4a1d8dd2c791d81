# SPDX-License-Identifier: MIT
# vCPU hot-add/remove latency (median, p99 over HOTPLUG_ARGS --ops, default 200) on plugvm and
# QEMU 7.2, and the time to grow to 8 and 64 vCPUs; see bench/hotplug/run.
BENCHES += hotplug

.PHONY: bench-hotplug
bench-hotplug: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/hotplug/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(HOTPLUG_ARGS) | tee build/bench/hotplug.md

# One hot-add and one hot-remove on plugvm, step by step (time and VM exits); not part of
# `make bench` (no README section): see bench/README.md's hotplug part.
.PHONY: bench-hotplug-breakdown
bench-hotplug-breakdown: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/hotplug/breakdown --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(BREAKDOWN_ARGS) | tee build/bench/hotplug-breakdown.md

# Every guest instruction of a hot-add and a hot-remove, by function and by interrupt kind,
# from KVM's kvm:kvm_emulate_insn tracepoint (root, tracefs; meaningful where KVM emulates the
# guest kernel, as kvm_pvm does). PROFILE_ARGS: --reps N, --qemu, --top N. Not part of
# `make bench`; see bench/README.md's hotplug part.
.PHONY: bench-hotplug-profile
bench-hotplug-profile: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/hotplug/profile --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(PROFILE_ARGS) | tee build/bench/hotplug-profile.md

# plugvm's device_add reply (its host-side share of an add) with a spare vCPU, one created in
# the add and a parked one; not part of `make bench`; see bench/README.md's hotplug part.
.PHONY: bench-hotplug-reply
bench-hotplug-reply: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/hotplug/reply --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(REPLY_ARGS) | tee build/bench/hotplug-reply.md
