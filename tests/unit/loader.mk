# SPDX-License-Identifier: MIT
# vmm/loader.c: ELF64 + PVH note loading into guest memory (vmm/mem.c).
UNIT_TESTS += test_loader
UNIT_test_loader_SRCS := vmm/loader.c vmm/mem.c vmm/log.c
