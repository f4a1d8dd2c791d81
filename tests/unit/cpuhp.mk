# SPDX-License-Identifier: MIT
# guest/kernel/cpuhp_engine.c: the CPU hotplug state engine, with a fake arch layer.
UNIT_TESTS += test_cpuhp
UNIT_test_cpuhp_SRCS := guest/kernel/cpuhp_engine.c
