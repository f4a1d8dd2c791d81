# SPDX-License-Identifier: MIT
# guest/kernel/lockdep.c: the lock validator (inversions, held-lock checks, tables running out,
# several host threads). The guest's printk.c defines vsnprintf/snprintf; rename them so libc
# (and cmocka) keep their own.
UNIT_TESTS += test_lockdep
UNIT_test_lockdep_SRCS := guest/kernel/lockdep.c guest/kernel/printk.c
UNIT_test_lockdep_CFLAGS := -DCONFIG_LOCKDEP=1 -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf

# lockdep.c also compiles freestanding (guest flags), with and without CONFIG_LOCKDEP.
LOCKDEP_GUEST_DEPS := guest/kernel/lockdep.c $(addprefix guest/kernel/,lockdep.h compiler.h \
	printk.h string.h)
$(B)/tests/unit/lockdep-guest-on.o: $(LOCKDEP_GUEST_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $< (guest flags, CONFIG_LOCKDEP)"
	$(Q)$(CC) $(GUEST_CFLAGS) -DCONFIG_LOCKDEP=1 -c $< -o $@
$(B)/tests/unit/lockdep-guest-off.o: $(LOCKDEP_GUEST_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $< (guest flags)"
	$(Q)$(CC) $(GUEST_CFLAGS) -c $< -o $@
unit-build: $(B)/tests/unit/lockdep-guest-on.o $(B)/tests/unit/lockdep-guest-off.o
