# SPDX-License-Identifier: MIT
# guest/kernel/cpuhp_engine.c: the CPU hotplug state engine walking the guest's own table
# (guest/kernel/cpuhp_table.c) with fakes of its callbacks and a fake arch layer.
UNIT_TESTS += test_cpuhp
UNIT_test_cpuhp_SRCS := guest/kernel/cpuhp_engine.c guest/kernel/cpuhp_table.c \
	tests/unit/cpuhp_fakes.c
