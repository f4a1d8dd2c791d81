# SPDX-License-Identifier: MIT
# vmm/sandbox.c: each thread kind's seccomp filter and the SIGSYS report, in child processes.
UNIT_TESTS += test_sandbox
UNIT_test_sandbox_SRCS := vmm/sandbox.c vmm/console.c vmm/log.c
UNIT_test_sandbox_LIBS := -lseccomp
