# SPDX-License-Identifier: MIT
# vmm/control/{agent*,control_agent,qmp_*}.c: the agent's QMP commands against a guest played
# from the host side (its messages fed in as the virtio transmitq would), with real socket
# clients where the session's life matters. virtio_agent_send() is a stub.
UNIT_TESTS += test_agent
UNIT_test_agent_SRCS := $(VMM_AGENT_SRCS) $(VMM_QMP_SRCS) vmm/log.c $(UNIT_QMP_CLIENT)
UNIT_test_agent_LIBS := -ljson-c
