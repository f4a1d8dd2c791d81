# SPDX-License-Identifier: MIT
# vmm/agent.c + vmm/control_agent.c + vmm/qmp.c: the agent's QMP commands against a guest
# played from the host side (its messages fed in as the virtio transmitq would), with real
# socket clients where the session's life matters. virtio_agent_send() is a stub.
UNIT_TESTS += test_agent
UNIT_test_agent_SRCS := vmm/agent.c vmm/agent_frame.c vmm/control_agent.c vmm/qmp.c vmm/log.c
UNIT_test_agent_LIBS := -ljson-c
