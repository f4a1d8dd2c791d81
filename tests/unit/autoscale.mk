# SPDX-License-Identifier: MIT
# vmm/autoscale_policy.c (vCPUs on demand: the decisions), config_autoscale.c (--autoscale's
# spec) and devices/load.c (the guest load port, driven as a hostile guest would).
UNIT_TESTS += test_autoscale
UNIT_test_autoscale_SRCS := vmm/autoscale_policy.c vmm/devices/load.c vmm/devices/pv_port.c \
	vmm/bus.c vmm/mem.c $(VMM_CONFIG_SRCS) vmm/log.c $(UNIT_VMM_STUBS)
