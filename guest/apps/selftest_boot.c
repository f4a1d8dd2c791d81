// SPDX-License-Identifier: MIT
/*
 * Boot self-tests: what every CPU sees of itself (per-CPU data, APIC IDs, TSC) agrees with
 * the platform description (MADT, CPUID), and the ACPI tables and allocator are sane.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_cpu_hotplug.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "plugvm_abi.h"

struct percpu_probe {
	unsigned expect_cpu;
	int ok;
	char why[96];
	uint64_t tsc;
};

static void probe_percpu(void *arg)
{
	struct percpu_probe *p = arg;
	struct cpu *c = this_cpu();
	uintptr_t sp = (uintptr_t)&p;
	uintptr_t stack = (uintptr_t)current_thread()->stack;

	p->ok = 0;
	if (c != cpu_table[p->expect_cpu])
		snprintf(p->why, sizeof(p->why), "this_cpu() %p is not cpu_table[%u] %p", (void *)c,
			 p->expect_cpu, (void *)cpu_table[p->expect_cpu]);
	else if (c->self != c || c->id != p->expect_cpu)
		snprintf(p->why, sizeof(p->why), "struct cpu self/id wrong (id %u)", c->id);
	else if (arch_percpu_base() != (uint64_t)(uintptr_t)c)
		snprintf(p->why, sizeof(p->why), "GS base %#lx is not struct cpu %p",
			 (unsigned long)arch_percpu_base(), (void *)c);
	else if (sp < stack || sp >= stack + ARCH_CPU_STACK_SIZE)
		snprintf(p->why, sizeof(p->why), "stack pointer %#lx outside thread %s's stack",
			 (unsigned long)sp, current_thread()->name);
	else
		p->ok = 1;
}

static int test_percpu(void)
{
	struct percpu_probe p;
	unsigned cpu, n = 0;

	for_each_cpu(cpu, &cpu_online_mask) {
		memset(&p, 0, sizeof(p));
		p.expect_cpu = cpu;
		if (smp_call_on_cpu(cpu, probe_percpu, &p))
			return selftest_fail("cpu %u did not answer", cpu);
		if (!p.ok)
			return selftest_fail("cpu %u: %s", cpu, p.why);
		n++;
	}
	selftest_report("cpus=%u", n);
	return 0;
}
SELFTEST("percpu", test_percpu);

struct apic_probe {
	uint32_t lapic, cpuid, percpu;
};

static void probe_apic(void *arg)
{
	struct apic_probe *p = arg;

	p->lapic = arch_apic_id();
	p->cpuid = arch_cpuid_apic_id();
	p->percpu = this_cpu()->apic_id;
}

static int test_apic(void)
{
	const struct acpi_info *ai = acpi_get_info();
	unsigned cpu, i, n = 0;

	if (cpumask_weight(&cpu_online_mask) != cpumask_weight(&cpu_present_mask))
		return selftest_fail("%u CPUs online, %u present", cpumask_weight(&cpu_online_mask),
				     cpumask_weight(&cpu_present_mask));
	for_each_cpu(cpu, &cpu_online_mask) {
		struct apic_probe p = { 0 };
		bool in_madt = false;

		smp_call_on_cpu(cpu, probe_apic, &p);
		if (p.lapic != cpu_apic_ids[cpu] || p.cpuid != p.lapic || p.percpu != p.lapic)
			return selftest_fail(
			    "cpu %u: LAPIC ID %u, CPUID %u, per-CPU %u, expected %u", cpu, p.lapic,
			    p.cpuid, p.percpu, cpu_apic_ids[cpu]);
		for (i = 0; i < ai->nr_cpus; i++)
			if (ai->cpus[i].apic_id == p.lapic && ai->cpus[i].enabled)
				in_madt = true;
		if (!in_madt)
			return selftest_fail("cpu %u: APIC ID %u is not an enabled MADT CPU", cpu,
					     p.lapic);
		n++;
	}
	selftest_report("mode=%s cpus=%u possible=%u", arch_x2apic() ? "x2apic" : "xapic", n,
			nr_cpu_ids);
	return 0;
}
SELFTEST("apic", test_apic);

static void probe_tsc(void *arg)
{
	((struct percpu_probe *)arg)->tsc = arch_tsc();
}

static bool close_khz(uint32_t a, uint32_t b, uint32_t permille)
{
	uint64_t diff = a > b ? a - b : b - a;

	return diff * 1000 <= (uint64_t)b * permille;
}

static int test_tsc(void)
{
	static const char *const others[] = { "plugvm", "cpuid-0x40000010", "kvmclock" };
	uint32_t khz = arch_tsc_khz(), pm;
	struct percpu_probe p;
	unsigned cpu, i;
	uint64_t t0, t2, max_gap = 0;

	if (!khz)
		return selftest_fail("no TSC frequency");
	/* Every source the hypervisor offers must tell the same frequency. */
	for (i = 0; i < ARRAY_SIZE(others); i++) {
		uint32_t k = arch_tsc_khz_by(others[i]);

		if (k && !close_khz(k, khz, 1))
			return selftest_fail("%s says %u kHz, clock uses %u kHz (%s)", others[i], k,
					     khz, arch_tsc_source());
	}
	/*
	 * The PM timer calibration is coarser: 2% (timer reads are VM exits), plus what it
	 * says it could not rule out (a host so loaded that no window was clean; the CI once
	 * measured 8% low with 69% in doubt): the check is that its own bound holds.
	 */
	pm = arch_tsc_khz_by("pmtimer");
	if (pm && !close_khz(pm, khz, 20 + arch_tsc_pm_doubt_ppm() / 1000))
		return selftest_fail("PM-timer calibration %u kHz vs %u kHz (%u ppm in doubt)", pm,
				     khz, arch_tsc_pm_doubt_ppm());
	/* TSCs agree across CPUs: each remote read falls between two local ones. */
	for_each_cpu(cpu, &cpu_online_mask) {
		if (cpu == smp_processor_id())
			continue;
		t0 = arch_tsc();
		smp_call_on_cpu(cpu, probe_tsc, &p);
		t2 = arch_tsc();
		if (p.tsc < t0 || p.tsc > t2)
			return selftest_fail("cpu %u TSC %lu outside [%lu, %lu]", cpu,
					     (unsigned long)p.tsc, (unsigned long)t0,
					     (unsigned long)t2);
		if (t2 - t0 > max_gap)
			max_gap = t2 - t0;
	}
	selftest_report("khz=%u source=%s pmtimer_khz=%u max_ipi_roundtrip_cycles=%lu", khz,
			arch_tsc_source(), pm, (unsigned long)max_gap);
	return 0;
}
SELFTEST("tsc", test_tsc);

static int test_acpi(void)
{
	const struct acpi_info *ai = acpi_get_info();
	unsigned i, enabled = 0;

	if (!ai->rsdp || !ai->have_fadt || !ai->have_madt)
		return selftest_fail("missing tables (rsdp %#lx, fadt %d, madt %d)",
				     (unsigned long)ai->rsdp, ai->have_fadt, ai->have_madt);
	if (ai->nr_warnings)
		return selftest_fail("%u ACPI warnings at boot", ai->nr_warnings);
	if (!ai->pm1a_cnt_blk || !ai->gpe0_blk || !ai->sci_irq || !ai->have_s5)
		return selftest_fail("FADT lacks PM1a control, GPE0, SCI or \\_S5");
	for (i = 0; i < ai->nr_cpus; i++)
		enabled += ai->cpus[i].enabled;
	if (enabled != cpumask_weight(&cpu_present_mask) || ai->nr_cpus != nr_cpu_ids)
		return selftest_fail("MADT: %u CPUs (%u enabled), kernel: %u possible, %u present",
				     ai->nr_cpus, enabled, nr_cpu_ids,
				     cpumask_weight(&cpu_present_mask));
	selftest_report("cpus=%u enabled=%u sci=%u gsi=%u pm1a_cnt=%#x gpe0=%#x s5=%u", ai->nr_cpus,
			enabled, ai->sci_irq, ai->sci_gsi, ai->pm1a_cnt_blk, ai->gpe0_blk,
			ai->s5_slp_typ);
	return 0;
}
SELFTEST("acpi", test_acpi);

/*
 * The ACPI CPU hotplug block (QEMU's `pc` or `q35` layout) switches to modern mode and
 * describes the same CPUs as the MADT: slot i is the i-th possible CPU by APIC ID, present
 * exactly when the kernel has that CPU present (the MADT's enabled flag at boot, changed by
 * any hotplug or eject since, e.g. an earlier acpi_cphp_eject), with no event pending; past
 * the last slot it reads 0. (The self-test keeps its name from before the driver's rename:
 * scripts and tests use it.)
 */
static int test_acpi_cpu_hotplug(void)
{
	const struct acpi_info *ai = acpi_get_info();
	unsigned i, present = 0;

	if (acpi_cpu_hotplug_probe())
		return selftest_fail("no modern ACPI CPU hotplug block (FADT GPE0 %#x)",
				     ai->gpe0_blk);
	for (i = 0; i < ai->nr_cpus; i++) {
		uint8_t f = acpi_cpu_hotplug_slot_flags(i);
		uint32_t id = acpi_cpu_hotplug_slot_apic_id(i);
		int cpu = cpu_from_apic_id(id);
		bool is_present = cpu >= 0 && cpumask_test(&cpu_present_mask, (unsigned)cpu);

		if (i && ai->cpus[i].apic_id <= ai->cpus[i - 1].apic_id)
			return selftest_fail("MADT not sorted by APIC ID at entry %u", i);
		if (id != ai->cpus[i].apic_id)
			return selftest_fail("slot %u: APIC ID %u, MADT says %u", i, id,
					     ai->cpus[i].apic_id);
		if (!!(f & ACPI_CPU_HOTPLUG_ENABLED) != is_present)
			return selftest_fail(
			    "slot %u: flags %#x, kernel present=%d (MADT enabled=%d)", i, f,
			    is_present, ai->cpus[i].enabled);
		if (f & (ACPI_CPU_HOTPLUG_INSERT | ACPI_CPU_HOTPLUG_REMOVE))
			return selftest_fail("slot %u: event pending at boot (flags %#x)", i, f);
		present += f & ACPI_CPU_HOTPLUG_ENABLED;
	}
	if (acpi_cpu_hotplug_slot_flags(ai->nr_cpus) != 0)
		return selftest_fail("slot %u past the last one reads flags %#x", ai->nr_cpus,
				     acpi_cpu_hotplug_slot_flags(ai->nr_cpus));
	if (acpi_cpu_hotplug_next_event(0) != -1)
		return selftest_fail("an event is pending at boot");
	/* The boot CPU cannot be ejected; saying "device check done" for it is harmless. */
	acpi_cpu_hotplug_eject(0);
	if (!(acpi_cpu_hotplug_slot_flags(0) & ACPI_CPU_HOTPLUG_ENABLED))
		return selftest_fail("the boot CPU's slot was ejected");
	acpi_cpu_hotplug_ost(0, 1, 0);
	selftest_report("slots=%u present=%u", ai->nr_cpus, present);
	return 0;
}
SELFTEST("acpi_cphp", test_acpi_cpu_hotplug);

/* plugvm's direct start refuses every malformed context, and says why (nothing starts). */
static int test_direct_start_checks(void)
{
	static const struct {
		uint32_t apic_id;
		uint64_t entry, stack, cr3, reserved;
		uint32_t want;
	} cases[] = {
		{ 0xffffffffu, 0x100000, 0x200000, 0x100000, 0, PLUGVM_START_EAPIC },
		{ PLUGVM_MAX_CPUS, 0x100000, 0x200000, 0x100000, 0, PLUGVM_START_EAPIC },
		{ 1, 0xfffffffff000ull, 0x200000, 0x100000, 0, PLUGVM_START_EADDR },
		{ 1, 0x100000, 4, 0x100000, 0, PLUGVM_START_EADDR },
		{ 1, 0x100000, 0x200000, 0x100800, 0, PLUGVM_START_EADDR },
		{ 1, 0x100000, 0x200000, 0x100000, 1, PLUGVM_START_EINVAL },
	};
	struct plugvm_start_ctx ctx __attribute__((aligned(8)));
	unsigned i;

	if (!arch_plugvm_feature(PLUGVM_FEATURE_DIRECT_START)) {
		selftest_report("no plugvm direct start here: nothing to check");
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.apic_id = cases[i].apic_id;
		ctx.status = 0xdead;
		ctx.entry = cases[i].entry;
		ctx.stack = cases[i].stack;
		ctx.cr3 = cases[i].cr3;
		ctx.reserved = cases[i].reserved;
		/* APIC ID 1 is a present, running CPU: only the bad field may stop it. */
		if (cases[i].apic_id == 1 && !cpumask_test(&cpu_online_mask, 1))
			continue;
		outl(PLUGVM_PORT_DIRECT_START, (uint32_t)(uintptr_t)&ctx);
		if (READ_ONCE(ctx.status) != cases[i].want)
			return selftest_fail("case %u: status %u, want %u", i, ctx.status,
					     cases[i].want);
	}
	selftest_report("refused=%zu", ARRAY_SIZE(cases));
	return 0;
}
SELFTEST("direct_start_checks", test_direct_start_checks);

/*
 * A context outside RAM or misaligned gets no answer at all, and does no harm; plugvm
 * warns about each (a guest it cannot even answer), so not in `all`.
 */
static int test_direct_start_junk(void)
{
	struct plugvm_start_ctx ctx __attribute__((aligned(8)));

	if (!arch_plugvm_feature(PLUGVM_FEATURE_DIRECT_START)) {
		selftest_report("no plugvm direct start here: nothing to check");
		return 0;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.status = 0xdead;
	outl(PLUGVM_PORT_DIRECT_START, 0xfffffff8u);
	outl(PLUGVM_PORT_DIRECT_START, (uint32_t)(uintptr_t)&ctx + 4);
	if (READ_ONCE(ctx.status) != 0xdead)
		return selftest_fail("a misaligned context was answered (status %u)", ctx.status);
	return 0;
}
SELFTEST_EXPLICIT("direct_start_junk", test_direct_start_junk);

/*
 * Guest-initiated hot-remove through the hotplug block: the highest CPU goes offline
 * (cpuhp), its slot is ejected, the hypervisor parks the vCPU (QMP DEVICE_DELETED) and the
 * slot reads absent. The CPU stays out of the present mask. Only when named.
 */
static int test_acpi_cpu_hotplug_eject(void)
{
	const struct acpi_info *ai = acpi_get_info();
	unsigned cpu, last = 0, slot;
	int err;

	for_each_cpu(cpu, &cpu_online_mask)
		last = cpu;
	if (!last) {
		selftest_report("cpus=1: nothing to eject");
		return 0;
	}
	if (acpi_cpu_hotplug_probe())
		return selftest_fail("no modern ACPI CPU hotplug block (FADT GPE0 %#x)",
				     ai->gpe0_blk);
	for (slot = 0; slot < ai->nr_cpus; slot++)
		if (ai->cpus[slot].apic_id == cpu_apic_ids[last])
			break;
	if (slot == ai->nr_cpus)
		return selftest_fail("cpu %u (APIC ID %u) has no MADT entry", last,
				     cpu_apic_ids[last]);
	err = cpu_down(last);
	if (err)
		return selftest_fail("cpu_down(%u) = %d", last, err);
	cpumask_clear(&cpu_present_mask, last);
	acpi_cpu_hotplug_eject(slot);
	if (acpi_cpu_hotplug_slot_flags(slot) & ACPI_CPU_HOTPLUG_ENABLED)
		return selftest_fail("slot %u still present after its eject", slot);
	selftest_report("cpu=%u slot=%u apic=%u ejected", last, slot, cpu_apic_ids[last]);
	return 0;
}
SELFTEST_EXPLICIT("acpi_cphp_eject", test_acpi_cpu_hotplug_eject);

static int test_mm(void)
{
	struct mm_stats before, after;
	void *small[64], *pages, *big;
	unsigned i;

	mm_get_stats(&before);
	for (i = 0; i < ARRAY_SIZE(small); i++) {
		small[i] = kmalloc(8 + i * 37);
		if (!small[i] || ((uintptr_t)small[i] & 15))
			return selftest_fail("kmalloc(%u) gave %p", 8 + i * 37, small[i]);
		memset(small[i], 0xa5, 8 + i * 37);
	}
	pages = page_alloc(3);
	big = kzalloc(3 * PAGE_SIZE);
	if (!pages || !big)
		return selftest_fail("page allocation failed");
	for (i = 0; i < ARRAY_SIZE(small); i++)
		kfree(small[i]);
	kfree(big);
	page_free(pages, 3);
	mm_get_stats(&after);
	/* kmalloc keeps carved pages in its lists; the byte count must balance. */
	if (after.kmalloc_bytes != before.kmalloc_bytes)
		return selftest_fail("kmalloc bytes %zu -> %zu", before.kmalloc_bytes,
				     after.kmalloc_bytes);
	selftest_report("total_pages=%zu free_pages=%zu", after.total_pages, after.free_pages);
	return 0;
}
SELFTEST("mm", test_mm);
