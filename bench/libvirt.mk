# SPDX-License-Identifier: MIT
# Domain start and vCPU hot-add/remove through virsh on libvirt/plugvm and libvirt/QEMU (pc, q35) beside
# plugvm's QMP path, in one run (median, p99); see bench/libvirt/run. Needs root (libvirtd).
BENCHES += libvirt

.PHONY: bench-libvirt
bench-libvirt: $(B)/plugvm guest
	@mkdir -p build/bench
	$(Q)set -o pipefail; bench/libvirt/run --plugvm $(B)/plugvm --kernel build/guest.elf \
		$(LIBVIRT_BENCH_ARGS) | tee build/bench/libvirt.md
