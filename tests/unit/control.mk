# SPDX-License-Identifier: MIT
# vmm/control.c (the control socket's CPU commands and events) over a real QMP server with a
# socket client; the vCPUs, devices, the agent's commands and the VM's stop are stubs.
UNIT_TESTS += test_control
UNIT_test_control_SRCS := vmm/control.c vmm/qmp.c vmm/log.c
UNIT_test_control_LIBS := -ljson-c
