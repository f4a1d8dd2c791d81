# SPDX-License-Identifier: MIT
# vmm/vcpu.c: a vCPU thread's life against a hostile guest's direct start (port 0xaf24 on
# the real bus and devices), with KVM and the moments threads meet played by the test:
# ioctl(), pthread_kill(), pthread_join() and pthread_create() are wrapped.
UNIT_TESTS += test_vcpu
UNIT_test_vcpu_SRCS := vmm/vcpu.c vmm/x86/regs.c vmm/x86/cpuid.c vmm/devices/cpu_hotplug.c \
	vmm/devices/acpi_cpu_hotplug.c vmm/bus.c vmm/mem.c vmm/log.c
UNIT_test_vcpu_LIBS := -ljson-c -Wl,--wrap=ioctl,--wrap=pthread_kill,--wrap=pthread_join,--wrap=pthread_create
