# plugvm: one non-recursive Makefile. `make` builds the VMM and the guest; see `make help`.
# Fragments: tests/unit/*.mk declare unit tests, bench/*.mk declare benchmarks.
.DEFAULT_GOAL := all
SHELL := /bin/bash
B := build
ifneq ($(V),1)
Q := @
MAKEFLAGS += --no-print-directory
endif
PYTEST := /usr/bin/python3 -m pytest

CC ?= gcc
# The host programs are hardened (scripts/check-hardening.sh checks the binaries, in `make
# check`): stack protector, fortified libc calls (needs -O1 or more), CET (IBT, shadow
# stack), PIE, full RELRO (-z now: the GOT read-only before main). -g stays: the check reads
# each unit's flags from DW_AT_producer.
HOST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-missing-field-initializers -D_GNU_SOURCE -Icommon \
	-fstack-protector-strong -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fPIE -fcf-protection=full
HOST_LDFLAGS := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
ifeq ($(SAN),1)
HOST_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
HOST_LDFLAGS += -fsanitize=address,undefined
B := build/san
endif
# ThreadSanitizer build of the VMM (make TSAN=1 vmm; `make check-tsan` runs it).
ifeq ($(TSAN),1)
# -Wno-tsan: TSan does not model fences; the one in virtio_mmio.c orders against the guest.
HOST_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
HOST_LDFLAGS += -fsanitize=thread
B := build/tsan
endif

# ---- VMM -------------------------------------------------------------------------------
# The core at the top of vmm/, the devices in vmm/devices/, the control plane (QMP, the
# guest agent) in vmm/control/, x86 specifics in vmm/x86/.
# The configuration readers (flags, -smp, --chaos, --domain) in vmm/config/.
VMM_CONFIG_SRCS := $(addprefix vmm/config/,config.c config_smp.c config_chaos.c \
	config_validate.c config_autoscale.c config_usage.c)
# plugvm-qemu's command line (QEMU's grammar, as libvirt writes it; vmm/config/qemu_cli.h).
VMM_QEMU_CLI_SRCS := $(addprefix vmm/config/,qemu_cli.c qemu_cli_dev.c qemu_cli_finish.c \
	qemu_opts.c)
VMM_DOMAIN_SRCS := $(addprefix vmm/config/,domain_xml.c domain_xml_elems.c domain_xml_cpus.c \
	xml_lib.c)
VMM_CORE_SRCS := $(addprefix vmm/,main.c machine.c jail.c vm.c log.c kvm.c mem.c vcpu.c cpus.c cpus_query.c bus.c \
	loader.c chaos.c console.c kvm_stats.c rt_tune.c sandbox.c runas.c fds.c daemon.c console_io.c \
	vcpu_crash.c autoscale.c autoscale_policy.c) $(VMM_CONFIG_SRCS) $(VMM_QEMU_CLI_SRCS) $(VMM_DOMAIN_SRCS)
VMM_X86_SRCS := $(addprefix vmm/x86/,acpi.c acpi_layout.c acpi_dump.c e820.c cpuid.c regs.c)
VMM_DEVICE_SRCS := $(addprefix vmm/devices/,uart16550.c debug_exit.c reset_control.c acpi_pm.c \
	acpi_cpu_hotplug.c pv_port.c direct_start.c hotplug_report.c hotplug_pv.c latency.c load.c virtio_mmio.c \
	virtio_console.c)
VMM_QMP_SRCS := $(addprefix vmm/control/,qmp_session.c qmp_events.c qmp_server.c)
VMM_AGENT_SRCS := $(addprefix vmm/control/,agent.c agent_frame.c agent_states.c agent_json.c \
	agent_requests.c control_agent.c)
VMM_CONTROL_SRCS := $(VMM_QMP_SRCS) vmm/control/control.c vmm/control/control_cpus.c \
	vmm/control/control_stats.c vmm/control/control_domain.c vmm/control/control_latency.c \
	vmm/control/control_probe.c vmm/control/control_libvirt.c vmm/control/control_autoscale.c \
	$(VMM_AGENT_SRCS)
VMM_SRCS := $(VMM_CORE_SRCS) $(VMM_X86_SRCS) $(VMM_DEVICE_SRCS) $(VMM_CONTROL_SRCS)
VMM_OBJS := $(VMM_SRCS:%.c=$(B)/%.o)
VMM_LIBS := -lpthread -ljson-c -lseccomp
# libxml2 (the --domain reader) is loaded with dlopen() when a document is read
# (vmm/config/xml_lib.h); its headers live under /usr/include/libxml2.
HOST_CFLAGS += $(shell pkg-config --cflags libxml-2.0)

$(B)/vmm/%.o: vmm/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(B)/plugvm: $(VMM_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $^ $(VMM_LIBS)

# plugvm-qemu: plugvm itself under another name (main.c reads QEMU's options when argv[0]'s
# last component is plugvm-qemu). A relative symlink, not a copy or a hard link: one binary
# to build, sign and install, and libvirt, which stat()s the <emulator> path through the
# link, re-probes whenever plugvm changes.
$(B)/plugvm-qemu: $(B)/plugvm
	@echo "  LN      $@"
	$(Q)ln -sfn plugvm $@

-include $(VMM_OBJS:.o=.d)

# ---- tools -----------------------------------------------------------------------------
# The client library (tools/lib/): the QMP connection, printing, the JSON lookups, the
# hotplug event matchers and cyclictest's line, built once into an archive that every tool
# links. A tool includes only tools/lib/, its own folder, common/ and vmm/version.h,
# vmm/utf8.h (scripts/check-includes.sh).
CLIENT_LIB_SRCS := $(addprefix tools/lib/,conn.c print.c json_get.c events.c tline.c)
CLIENT_LIB_OBJS := $(CLIENT_LIB_SRCS:%.c=$(B)/%.o)
CLIENT_LIB := $(B)/tools/libplugvm-client.a

$(B)/tools/%.o: tools/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(HOST_CFLAGS) -I. -MMD -MP -c $< -o $@

$(CLIENT_LIB): $(CLIENT_LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

-include $(CLIENT_LIB_OBJS:.o=.d)

# plugctl: the QMP client (tools/plugctl/), a program of its own, built beside plugvm.
PLUGCTL_SRCS := $(addprefix tools/plugctl/,main.c cmd_cpus.c cmd_cpuhp.c cmd_stats.c \
	cmd_virsh.c cmd_vcpus.c cmd_domain.c cmd_latency.c cmd_autoscale.c)
PLUGCTL_OBJS := $(PLUGCTL_SRCS:%.c=$(B)/%.o)

$(B)/plugctl: $(PLUGCTL_OBJS) $(CLIENT_LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $^ -ljson-c

-include $(PLUGCTL_OBJS:.o=.d)

# plugvm-latency: cyclictest in a guest as one command (tools/latency/).
LATENCY_SRCS := $(addprefix tools/latency/,main.c churn.c report.c plot.c host.c)
LATENCY_OBJS := $(LATENCY_SRCS:%.c=$(B)/%.o)

$(B)/plugvm-latency: $(LATENCY_OBJS) $(CLIENT_LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(HOST_LDFLAGS) -o $@ $^ -ljson-c

-include $(LATENCY_OBJS:.o=.d)

# ---- guest ------------------------------------------------------------------------------
GCC_INCLUDE := $(shell $(CC) -print-file-name=include)
# Linux's UAPI headers (virtio layouts) for the freestanding guest: only linux/, asm/ and
# asm-generic/ from linux-libc-dev are visible, never the C library's headers.
GUEST_UAPI := build/uapi
$(GUEST_UAPI)/.stamp:
	@mkdir -p $(GUEST_UAPI)
	$(Q)ln -sfn /usr/include/linux $(GUEST_UAPI)/linux
	$(Q)ln -sfn /usr/include/asm-generic $(GUEST_UAPI)/asm-generic
	$(Q)ln -sfn /usr/include/$(shell $(CC) -print-multiarch)/asm $(GUEST_UAPI)/asm
	$(Q)touch $@
GUEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-missing-field-initializers \
	-ffreestanding -nostdinc -isystem $(GCC_INCLUDE) -fno-builtin-printf \
	-fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mgeneral-regs-only -mcmodel=small \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer -fcf-protection=none -fno-common \
	-Iguest -Iguest/arch/x86 -Icommon -isystem $(GUEST_UAPI) $(GUEST_EXTRA_INC)
GUEST_ASFLAGS := -Iguest/arch/x86 -D__ASSEMBLY__
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
	-Wl,-z,noexecstack -Wl,-T,guest/arch/x86/guest.ld

GUEST_ARCH_SRCS := $(addprefix guest/arch/x86/,entry.S trampoline.S vectors.S switch.S boot.c \
	acpi.c gdt.c idt.c traps.c lapic.c lapic_timer.c ioapic.c tsc.c smp.c power.c crash.c \
	string.c context.c)
GUEST_INIT_SRCS := guest/init/main.c
GUEST_KERNEL_SRCS := $(addprefix guest/kernel/,printk.c bug.c cmdline.c mm.c panic.c cpu.c \
	smp.c sched.c sched_hotplug.c sched_debug.c sched_load.c thread.c prioq.c wait.c mutex.c local_lock.c \
	lockdep.c lockdep_report.c timer.c tick.c hrtimer.c timer_wheel.c timerqueue.c cpuhp.c \
	cpuhp_engine.c cpuhp_table.c watchdog.c nmi.c)
GUEST_DRIVER_SRCS := $(addprefix guest/drivers/,uart.c monitor.c monitor_input.c acpi_cpu_hotplug.c acpi_hotplug.c \
	virtio_mmio.c virtio_console.c agent.c load.c)
GUEST_APP_SRCS := $(addprefix guest/apps/,selftest.c selftest_boot.c selftest_lock.c \
	selftest_sched.c selftest_timer_cpus.c selftest_timer.c selftest_cpuhp_walk.c \
	selftest_cpuhp.c selftest_cpuhp_hold.c selftest_hotplug.c selftest_virtio.c selftest_watchdog.c \
	selftest_torture.c selftest_hostile.c selftest_flood.c selftest_load_liar.c agent_service.c workload.c cyclic.c \
	latency_stress.c bursts.c)
# Link order is the order of the linker-section tables (command-line words, self-tests); GCC
# emits one file's entries last-defined first, so a file split in two links its second half first.
GUEST_SRCS := $(GUEST_ARCH_SRCS) $(GUEST_INIT_SRCS) $(GUEST_KERNEL_SRCS) $(GUEST_DRIVER_SRCS) \
	$(GUEST_APP_SRCS)
# Guest variants, each with its own objects: the default build (build/guest.elf) and the RT
# build (build/rt/guest.elf, PREEMPT_RT-style local_lock), both with the lock validator;
# DEBUG=0 builds of each without it (build/release/, build/release/rt/) for benchmarks.
DEBUG ?= 1
GUEST_DEBUG_FLAGS := $(if $(filter 1,$(DEBUG)),-DCONFIG_LOCKDEP=1)
GUEST_PREFIX := $(if $(filter 1,$(DEBUG)),build,build/release)

# $(1) = output dir, $(2) = extra CFLAGS
define guest_variant
$(1)/guest-obj/%.c.o: %.c | $(GUEST_UAPI)/.stamp
	@mkdir -p $$(@D)
	@echo "  CC      $$< ($(1))"
	$$(Q)$$(CC) $$(GUEST_CFLAGS) $(2) -MMD -MP -c $$< -o $$@

$(1)/guest-obj/%.S.o: %.S | $(GUEST_UAPI)/.stamp
	@mkdir -p $$(@D)
	@echo "  AS      $$< ($(1))"
	$$(Q)$$(CC) $$(GUEST_CFLAGS) $(2) $$(GUEST_ASFLAGS) -MMD -MP -c $$< -o $$@

$(1)/guest.elf: $$(patsubst %,$(1)/guest-obj/%.o,$$(GUEST_SRCS)) guest/arch/x86/guest.ld
	@echo "  LD      $$@"
	$$(Q)$$(CC) $$(GUEST_CFLAGS) $(2) $$(GUEST_LDFLAGS) -o $$@ \
		$$(patsubst %,$(1)/guest-obj/%.o,$$(GUEST_SRCS)) -lgcc

-include $$(patsubst %,$(1)/guest-obj/%.d,$$(GUEST_SRCS))
endef

$(eval $(call guest_variant,$(GUEST_PREFIX),$(GUEST_DEBUG_FLAGS)))
$(eval $(call guest_variant,$(GUEST_PREFIX)/rt,$(GUEST_DEBUG_FLAGS) -DCONFIG_PREEMPT_RT=1))

.PHONY: all vmm guest guest-rt clean
all: vmm guest guest-rt
vmm: $(B)/plugvm $(B)/plugvm-qemu $(B)/plugctl $(B)/plugvm-latency
guest: $(GUEST_PREFIX)/guest.elf
guest-rt: $(GUEST_PREFIX)/rt/guest.elf

# ---- unit tests (cmocka, host) ---------------------------------------------------------
# A fragment declares: UNIT_TESTS += test_foo; UNIT_test_foo_SRCS := the module sources.
# VMM tests add $(UNIT_VMM_STUBS) (weak stand-ins for the modules they do not link) and, to
# talk to a QMP server, $(UNIT_QMP_CLIENT).
UNIT_TESTS :=
UNIT_VMM_STUBS := tests/unit/vmm_shim/stubs.c
UNIT_QMP_CLIENT := tests/unit/vmm_shim/qmp_client.c
include $(sort $(wildcard tests/unit/*.mk))
UNIT_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-D_GNU_SOURCE -DPLUGVM_HOST_TEST -Itests/unit/shim -Iguest -Icommon -I.
UNIT_LDFLAGS :=
ifeq ($(SAN),1)
UNIT_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
UNIT_LDFLAGS += -fsanitize=address,undefined
endif
UNIT_HEADERS := $(wildcard common/*.h guest/arch/arch_api.h guest/kernel/*.h guest/drivers/*.h \
	guest/apps/*.h vmm/*.h vmm/*/*.h tools/*/*.h tests/unit/shim/*.h tests/unit/vmm_shim/*.h \
	tests/unit/*.h)

define unit_rule
$(B)/tests/unit/$(1): tests/unit/$(1).c $$(UNIT_$(1)_SRCS) tests/unit/shim/arch_shim.c $$(UNIT_HEADERS)
	@mkdir -p $$(@D)
	@echo "  CCLD    $$@"
	$$(Q)$$(CC) $$(UNIT_CFLAGS) $$(UNIT_$(1)_CFLAGS) -o $$@ $$(filter %.c,$$^) \
		$$(UNIT_LDFLAGS) -lcmocka -lpthread $$(UNIT_$(1)_LIBS)
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rule,$(t))))

UNIT_BINS := $(UNIT_TESTS:%=$(B)/tests/unit/%)
.PHONY: unit-build unit
unit-build: $(UNIT_BINS)
unit: unit-build
	@fail=0; for t in $(UNIT_BINS); do \
		echo "  UNIT    $$t"; \
		timeout 60 $$t > $$t.log 2>&1 || { cat $$t.log; echo "FAILED: $$t"; fail=1; }; \
		grep -h ': skipped: ' $$t.log || true; \
	done; exit $$fail

# ---- fuzzing (libFuzzer): fuzz-build, fuzz-smoke, fuzz, fuzz-seeds ---------------------------
# After the VMM's source lists, which the targets link.
include tests/fuzz/fuzz.mk

# ---- benchmarks ------------------------------------------------------------------------
# A fragment bench/NAME.mk declares: BENCHES += NAME, and a target bench-NAME that prints
# its markdown table and writes it to build/bench/NAME.md. `make bench` runs them all and
# rewrites their sections of bench/README.md.
BENCHES :=
include $(sort $(wildcard bench/*.mk))
.PHONY: bench
bench: all
	@mkdir -p build/bench
	$(Q)for b in $(BENCHES); do $(MAKE) bench-$$b || exit 1; done
	$(Q)/usr/bin/python3 scripts/bench-readme.py $(BENCHES)

# ---- install ------------------------------------------------------------------------------
# `make install [PREFIX=/usr/local] [DESTDIR=]` and `make uninstall` with the same values:
#   PREFIX/bin/plugvm, plugctl, plugvm-latency, and plugvm-qemu (a symlink to plugvm, which
#   acts as the QEMU-compatible front end when called by that name);
#   PREFIX/lib/plugvm/guest.elf and guest-rt.elf (the RT build), where plugvm, plugvm-latency
#   --rt and configs/libvirt/*.xml look for them. DEBUG=0 installs the guests without the lock
#   validator. uninstall removes these files, and PREFIX/lib/plugvm once empty; nothing else.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_BINDIR := $(DESTDIR)$(PREFIX)/bin
INSTALL_LIBDIR := $(DESTDIR)$(PREFIX)/lib/plugvm
INSTALL_PROGRAMS := plugvm plugctl plugvm-latency
.PHONY: install uninstall
install: all
	$(Q)install -d -m 0755 '$(INSTALL_BINDIR)' '$(INSTALL_LIBDIR)'
	$(Q)install -m 0755 $(addprefix $(B)/,$(INSTALL_PROGRAMS)) '$(INSTALL_BINDIR)/'
	$(Q)ln -sfn plugvm '$(INSTALL_BINDIR)/plugvm-qemu'
	$(Q)install -m 0644 $(GUEST_PREFIX)/guest.elf '$(INSTALL_LIBDIR)/guest.elf'
	$(Q)install -m 0644 $(GUEST_PREFIX)/rt/guest.elf '$(INSTALL_LIBDIR)/guest-rt.elf'
	@echo "  INSTALL $(INSTALL_PROGRAMS) plugvm-qemu -> $(INSTALL_BINDIR)"
	@echo "  INSTALL guest.elf guest-rt.elf -> $(INSTALL_LIBDIR)"
uninstall:
	$(Q)rm -f $(addprefix '$(INSTALL_BINDIR)'/,$(INSTALL_PROGRAMS) plugvm-qemu) \
		'$(INSTALL_LIBDIR)/guest.elf' '$(INSTALL_LIBDIR)/guest-rt.elf'
	$(Q)if [ -d '$(INSTALL_LIBDIR)' ]; then rmdir --ignore-fail-on-non-empty '$(INSTALL_LIBDIR)'; fi

# ---- dependencies, run, test -------------------------------------------------------------
.PHONY: deps run test test-quick integration
deps:
	$(Q)bash scripts/deps.sh

# configs/default.args is shell words (quotes included): eval, so the guest gets selftest=all,
# not "selftest=all".
run: deps all
	eval exec '$(B)/plugvm' "$$(cat configs/default.args)"

# What needs /dev/kvm (the integration tests, the sanitizer runs, the soak) runs under
# $(ON_KVM): directly, or with NESTED_KVM=1 in a nested-KVM VM on QEMU's TCG for a host
# without /dev/kvm (scripts/nested-kvm.sh; README "Tests" says what that VM cannot run).
ON_KVM := $(if $(NESTED_KVM),scripts/nested-kvm.sh run)

integration: all
	$(ON_KVM) $(PYTEST) -q tests/integration $(PYTEST_ARGS)

test: deps
	$(Q)$(MAKE) all
	$(Q)$(MAKE) unit
	$(Q)$(MAKE) integration

# The edit-test loop: the unit tests and the integration tests not marked slow (README, "Tests").
test-quick: all
	$(Q)$(MAKE) unit
	$(ON_KVM) $(PYTEST) -q tests/integration -m "not slow" $(PYTEST_ARGS)

# ---- soaks ---------------------------------------------------------------------------------
# tests/soak/soak.py: boots and hot-add/remove operations, every one checked; progress line
# while it runs, summary table at the end (build/soak/summary.md). SOAK_ARGS picks the sizes.
.PHONY: soak soak-ci
soak: all
	$(Q)/usr/bin/python3 tests/soak/soak.py --boots 1000 --full 100 --ops 10000 $(SOAK_ARGS)

# The CI-sized soak that `make check` runs: 50 short boots (half with --chaos), 4 full ones,
# 1,000 hot-add/remove operations under --chaos while the torture tests run.
soak-ci: all
	$(Q)$(ON_KVM) /usr/bin/python3 tests/soak/soak.py --boots 50 --full 4 --ops 1000 $(SOAK_ARGS)

# ---- static analysis, format, sanitizers -------------------------------------------------
FORMAT_FILES = $(shell git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '^build/')
CPPCHECK := cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	--std=c11 --inline-suppr --suppressions-list=scripts/cppcheck-suppressions.txt \
	-D__x86_64__ -D__GNUC__
.PHONY: format check check-static check-hardening check-san check-san-all check-tsan
format:
	clang-format -i $(FORMAT_FILES)

check-static:
	@echo "  CHECK   includes"
	$(Q)bash scripts/check-includes.sh
	@echo "  CHECK   docs name only what exists"
	$(Q)/usr/bin/python3 scripts/check-docs.py
	@echo "  CHECK   comments"
	$(Q)bash scripts/check-comments.sh
	@echo "  CHECK   file and function sizes"
	$(Q)/usr/bin/python3 scripts/check-sizes.py
	@echo "  CHECK   clang-format"
	$(Q)clang-format --dry-run -Werror $(FORMAT_FILES)
	@echo "  CHECK   cppcheck"
	$(Q)$(CPPCHECK) -Icommon vmm/
	$(Q)$(CPPCHECK) -I. -Icommon tools/
	$(Q)$(CPPCHECK) -Iguest -Iguest/arch/x86 -Icommon guest/
	@echo "  CHECK   gcc -fanalyzer vmm/ tools/"
	$(Q)for f in $(VMM_SRCS) $(CLIENT_LIB_SRCS) $(PLUGCTL_SRCS); do \
		$(CC) $(HOST_CFLAGS) -I. -fanalyzer -c -o /dev/null $$f || exit 1; done

# The release build of the host programs carries the flags above (full RELRO, PIE, stack
# protector, fortify, CET): read back from the ELF files.
check-hardening: vmm
	@echo "  CHECK   hardening"
	$(Q)bash scripts/check-hardening.sh $(B)/plugvm $(B)/plugctl $(B)/plugvm-latency

# The VMM and the unit tests under ASan+UBSan; against that VMM, the integration tests that
# drive its surfaces (QMP, plugctl, hotplug, the agent, virtio, chaos, bad input). The rest
# (test_boot, test_sched, test_timer, test_reliability) spend their time in the guest, and
# the whole suite under ASan would take CI past its 30 minutes: `make check-san-all`.
SAN_TESTS := test_qmp.py test_qmp_libvirt.py test_plugctl.py test_hotplug.py test_agent.py \
	test_virtio.py test_chaos.py test_errors.py test_cpuhp.py test_hostile.py test_qmp_fairness.py \
	test_qmp_probe.py test_qemu_cli.py
check-san: guest
	$(Q)$(MAKE) SAN=1 vmm unit
	$(Q)ln -sf ../guest.elf build/san/guest.elf
	$(Q)$(ON_KVM) env PLUGVM_BIN=$(CURDIR)/build/san/plugvm $(PYTEST) -q \
		$(addprefix tests/integration/,$(SAN_TESTS)) -k "not qemu" $(PYTEST_ARGS)

check-san-all: guest
	$(Q)$(MAKE) SAN=1 vmm unit
	$(Q)ln -sf ../guest.elf build/san/guest.elf
	$(Q)$(ON_KVM) env PLUGVM_BIN=$(CURDIR)/build/san/plugvm $(PYTEST) -q tests/integration \
		-k "not qemu and not test_sandbox and not test_jail and not test_domain and not test_memory" \
		$(PYTEST_ARGS)

# The VMM under ThreadSanitizer running the hotplug (but the long churn) and QMP integration
# tests, libvirt's included (~2 min): a data race ends plugvm with status 66, which fails the
# test.
check-tsan: guest
	$(Q)$(MAKE) TSAN=1 vmm
	$(Q)ln -sf ../guest.elf build/tsan/guest.elf
	$(Q)$(ON_KVM) env TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
		PLUGVM_BIN=$(CURDIR)/build/tsan/plugvm $(PYTEST) -q tests/integration/test_hotplug.py \
		tests/integration/test_qmp.py tests/integration/test_qmp_libvirt.py -k "not churn" \
		$(PYTEST_ARGS)

check: deps
	$(Q)$(MAKE) all
	$(Q)$(MAKE) check-static
	$(Q)$(MAKE) check-hardening
	$(Q)$(MAKE) check-san
	$(Q)$(MAKE) check-tsan
	$(Q)if $(MAKE) -n fuzz-smoke >/dev/null 2>&1; then $(MAKE) fuzz-smoke; fi
	$(Q)$(MAKE) soak-ci

clean:
	rm -rf build
