# SPDX-License-Identifier: MIT
# vmm/control/control.c and control_cpus.c (the control socket's commands, the CPU ones, and
# the vCPU lifecycle's events as QMP) over a real QMP server with a socket client; the
# lifecycle is a stub the test sets.
UNIT_TESTS += test_control
UNIT_test_control_SRCS := vmm/control/control.c vmm/control/control_cpus.c \
	vmm/control/control_stats.c vmm/kvm_stats.c vmm/control/control_domain.c \
	vmm/control/control_latency.c vmm/control/control_probe.c vmm/control/control_libvirt.c \
	vmm/kvm.c $(VMM_QMP_SRCS) vmm/log.c $(UNIT_VMM_STUBS) $(UNIT_QMP_CLIENT)
UNIT_test_control_LIBS := -ljson-c
