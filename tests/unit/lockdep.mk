# SPDX-License-Identifier: MIT
# guest/kernel/lockdep.c and lockdep_report.c: the lock validator (inversions, held-lock
# checks, tables running out, several host threads). The guest's printk.c defines vsnprintf/snprintf; rename them so libc
# (and cmocka) keep their own.
UNIT_TESTS += test_lockdep
UNIT_test_lockdep_SRCS := guest/kernel/lockdep.c guest/kernel/lockdep_report.c \
	guest/kernel/printk.c
UNIT_test_lockdep_CFLAGS := -DCONFIG_LOCKDEP=1 -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf

# Both also compile freestanding (guest flags), with and without CONFIG_LOCKDEP.
LOCKDEP_GUEST_SRCS := guest/kernel/lockdep.c guest/kernel/lockdep_report.c
LOCKDEP_GUEST_DEPS := $(LOCKDEP_GUEST_SRCS) $(addprefix guest/kernel/,lockdep.h \
	lockdep_internal.h compiler.h printk.h string.h)
$(B)/tests/unit/lockdep-guest-on.stamp: $(LOCKDEP_GUEST_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $(LOCKDEP_GUEST_SRCS) (guest flags, CONFIG_LOCKDEP)"
	$(Q)for f in $(LOCKDEP_GUEST_SRCS); do \
		$(CC) $(GUEST_CFLAGS) -DCONFIG_LOCKDEP=1 -c $$f -o /dev/null || exit 1; done
	$(Q)touch $@
$(B)/tests/unit/lockdep-guest-off.stamp: $(LOCKDEP_GUEST_DEPS)
	@mkdir -p $(@D)
	@echo "  CC      $(LOCKDEP_GUEST_SRCS) (guest flags)"
	$(Q)for f in $(LOCKDEP_GUEST_SRCS); do \
		$(CC) $(GUEST_CFLAGS) -c $$f -o /dev/null || exit 1; done
	$(Q)touch $@
unit-build: $(B)/tests/unit/lockdep-guest-on.stamp $(B)/tests/unit/lockdep-guest-off.stamp
