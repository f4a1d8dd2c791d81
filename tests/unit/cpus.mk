# SPDX-License-Identifier: MIT
# vmm/cpus.c: the vCPU lifecycle with vmm/vcpu.c and the CPU hotplug devices on the real
# bus, the guest played from the host side; KVM and the moments threads meet are played by
# the test: ioctl(), mmap(), pthread_kill(), pthread_join(), pthread_create() are wrapped.
UNIT_TESTS += test_cpus
UNIT_test_cpus_SRCS := vmm/cpus.c vmm/cpus_query.c vmm/vcpu.c vmm/vcpu_crash.c vmm/x86/regs.c \
	vmm/x86/cpuid.c vmm/x86/acpi_layout.c \
	vmm/devices/acpi_cpu_hotplug.c vmm/devices/pv_port.c vmm/devices/direct_start.c vmm/devices/hotplug_report.c \
	vmm/devices/hotplug_pv.c \
	vmm/bus.c vmm/mem.c vmm/log.c vmm/rt_tune.c vmm/sandbox.c $(UNIT_VMM_STUBS)
UNIT_test_cpus_LIBS := -Wl,--wrap=ioctl,--wrap=mmap,--wrap=pthread_kill,--wrap=pthread_join \
	-Wl,--wrap=pthread_create
UNIT_test_cpus_LIBS += -lseccomp
