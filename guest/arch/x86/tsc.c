// SPDX-License-Identifier: MIT
/*
 * The TSC as the clock. Its frequency comes from, in order: plugvm's CPUID leaf, the
 * hypervisor timing leaf 0x40000010, CPUID 0x15, KVM's pvclock (kvmclock), and last a
 * calibration against the ACPI PM timer. `tsc=calibrate|kvmclock|cpuid` forces a method
 * (for tests). Conversion uses a 32.32 fixed-point multiplier set once at boot.
 */
#include "acpi.h"
#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "plugvm_abi.h"
#include "setup.h"
#include "x86.h"

CMDLINE_PARAM(tsc, .name = "tsc", .kind = CMDLINE_ENUM, .choices = "calibrate|kvmclock|cpuid");

#define MSR_KVM_SYSTEM_TIME_NEW	 0x4b564d01
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)

static uint32_t tsc_khz;
static const char *tsc_source = "none";
static uint64_t boot_tsc;
static uint64_t ns_mult; /* ns = (tsc * ns_mult) >> 32 */

uint32_t arch_tsc_khz(void)
{
	return tsc_khz;
}

const char *arch_tsc_source(void)
{
	return tsc_source;
}

uint64_t arch_tsc_to_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * ns_mult) >> 32);
}

uint64_t arch_ns_to_tsc(uint64_t ns)
{
	return boot_tsc + (uint64_t)((unsigned __int128)ns * tsc_khz / 1000000u);
}

uint64_t arch_now_ns(void)
{
	return arch_tsc_to_ns(arch_tsc() - boot_tsc);
}

void arch_udelay(uint64_t us)
{
	uint64_t end = arch_tsc() + us * tsc_khz / 1000;

	while ((int64_t)(arch_tsc() - end) < 0)
		arch_cpu_relax();
}

static uint32_t from_plugvm_leaf(void)
{
	struct cpuid_regs r;

	return plugvm_info(&r) ? r.ebx : 0;
}

static uint32_t from_timing_leaf(void)
{
	if (!(cpuid(1, 0).ecx & (1u << 31)))
		return 0; /* no hypervisor: 0x4000xxxx leaves mean nothing */
	if (cpuid(PLUGVM_CPUID_KVM_BASE, 0).eax < PLUGVM_CPUID_TIMING)
		return 0;
	return cpuid(PLUGVM_CPUID_TIMING, 0).eax;
}

static uint32_t from_cpuid15(void)
{
	struct cpuid_regs r;

	if (cpuid(0, 0).eax < 0x15)
		return 0;
	r = cpuid(0x15, 0);
	if (!r.eax || !r.ebx || !r.ecx)
		return 0;
	return (uint32_t)((uint64_t)r.ecx * r.ebx / r.eax / 1000);
}

struct pvclock {
	uint32_t version;
	uint32_t pad0;
	uint64_t tsc_timestamp;
	uint64_t system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
} __attribute__((packed, aligned(32)));

static uint32_t from_kvmclock(void)
{
	static struct pvclock pvc;
	struct cpuid_regs r = cpuid(PLUGVM_CPUID_KVM_BASE, 0);
	uint64_t khz;
	uint32_t version, mul;
	int8_t shift;

	if (!(cpuid(1, 0).ecx & (1u << 31)) || r.ebx != 0x4b4d564b || r.ecx != 0x564b4d56 ||
	    r.edx != 0x4d)
		return 0;
	if (!(cpuid(PLUGVM_CPUID_KVM_BASE + 1, 0).eax & KVM_FEATURE_CLOCKSOURCE2))
		return 0;
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uint64_t)(uintptr_t)&pvc | 1);
	do {
		version = __atomic_load_n(&pvc.version, __ATOMIC_ACQUIRE);
		mul = pvc.tsc_to_system_mul;
		shift = pvc.tsc_shift;
	} while ((version & 1) || version != __atomic_load_n(&pvc.version, __ATOMIC_ACQUIRE));
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, 0);
	if (!mul)
		return 0;
	khz = (1000000ull << 32) / mul;
	khz = shift < 0 ? khz << -shift : khz >> shift;
	return (uint32_t)khz;
}

/* A PM-timer read between two TSC reads: it happened somewhere in [tsc_lo, tsc_hi]. */
struct pm_sample {
	uint32_t pm;
	uint64_t tsc_lo, tsc_hi;
};

static void pm_sample(uint16_t port, struct pm_sample *s)
{
	s->tsc_lo = arch_tsc();
	s->pm = inl(port) & 0xffffff;
	s->tsc_hi = arch_tsc();
}

#define PM_CALIBRATE_TRIES 40

/*
 * The TSC against the ACPI PM timer over a 20 ms window. Each PM-timer read is a VM exit,
 * and the host may deschedule the vCPU inside it (a busy host, plugvm --chaos): a read paired
 * with a TSC read taken after such a stall measures the window short by the stall (it once
 * gave 2.1 GHz for a 2.6 GHz TSC). So each read is bracketed by TSC reads, as Linux's
 * pit_hpet_ptimer_calibrate_cpu() does. The reference may also jump against the TSC between
 * two reads: plugvm's PM timer once tore its 4-byte reads (a read 65536 ticks ahead measured
 * 1.25 GHz for a 2.6 GHz TSC), and on a host whose guest TSC stops while the vCPU is
 * descheduled the PM timer goes on. The loop reads the PM timer back to back, so either
 * shows as a long step between two consecutive reads. A window is measured again unless
 * its end reads are tight (the brackets' sum under 1% of the window) and its long steps
 * (over 1/200 of the window each) add up to under 1% of it; the best window wins otherwise.
 */
static uint32_t pm_doubt_ppm;

uint32_t arch_tsc_pm_doubt_ppm(void)
{
	return pm_doubt_ppm;
}

static uint32_t from_pm_timer(void)
{
	const struct acpi_info *ai = acpi_get_info();
	uint16_t port = ai->pm_tmr_blk ? (uint16_t)ai->pm_tmr_blk : 0;
	const uint32_t window = PLUGVM_PM_TMR_HZ / 50; /* 20 ms */
	uint64_t best_err = UINT64_MAX, khz = 0;
	struct pm_sample s0, s1;
	unsigned long flags;
	uint32_t elapsed, prev, step, long_steps;
	int try;

	if (!port)
		return 0;
	for (try = 0; try < PM_CALIBRATE_TRIES; try++) {
		uint64_t slack, tsc, err;

		/* Interrupts would stretch the brackets. */
		flags = arch_irq_save();
		pm_sample(port, &s0);
		prev = s0.pm;
		long_steps = 0;
		do {
			pm_sample(port, &s1);
			step = (s1.pm - prev) & 0xffffff;
			if (step > window / 200)
				long_steps += step;
			prev = s1.pm;
			elapsed = (s1.pm - s0.pm) & 0xffffff;
		} while (elapsed < window);
		arch_irq_restore(flags);
		/*
		 * More than half the 24-bit range in one window: the counter read lower than
		 * before (seen once on a loaded host: 10 kHz measured), not 2.3 s elapsed.
		 */
		if (elapsed > 0x800000)
			continue;
		slack = (s0.tsc_hi - s0.tsc_lo) + (s1.tsc_hi - s1.tsc_lo);
		tsc = (s1.tsc_lo + s1.tsc_hi) / 2 - (s0.tsc_lo + s0.tsc_hi) / 2;
		/* Both doubts as parts per 10^6 of the window. */
		err = tsc ? slack * 1000000 / tsc : UINT64_MAX;
		err += (uint64_t)long_steps * 1000000 / elapsed;
		if (err < best_err) {
			best_err = err;
			khz = tsc * PLUGVM_PM_TMR_HZ / elapsed / 1000;
		}
		if (slack * 100 < tsc && long_steps * 100 < elapsed)
			break;
	}
	pm_doubt_ppm = best_err > UINT32_MAX ? UINT32_MAX : (uint32_t)best_err;
	if (try == PM_CALIBRATE_TRIES)
		pr_warn(
		    "tsc: PM-timer calibration never got a clean window (best: %lu ppm in doubt)\n",
		    (unsigned long)best_err);
	return (uint32_t)khz;
}

static const struct {
	const char *name;
	uint32_t (*fn)(void);
} methods[] = {
	{ "plugvm", from_plugvm_leaf }, { "cpuid-0x40000010", from_timing_leaf },
	{ "cpuid-0x15", from_cpuid15 }, { "kvmclock", from_kvmclock },
	{ "pmtimer", from_pm_timer },
};

uint32_t arch_tsc_khz_by(const char *method)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			return methods[i].fn();
	return 0;
}

void tsc_init(void)
{
	size_t len = 0, i;
	const char *force = cmdline_value("tsc", &len);

	boot_tsc = arch_tsc();
	for (i = 0; i < ARRAY_SIZE(methods) && !tsc_khz; i++) {
		if (force) {
			bool want = (len == 9 && !memcmp(force, "calibrate", 9) &&
				     methods[i].fn == from_pm_timer) ||
				    (len == 8 && !memcmp(force, "kvmclock", 8) &&
				     methods[i].fn == from_kvmclock) ||
				    (len == 5 && !memcmp(force, "cpuid", 5) &&
				     methods[i].fn == from_timing_leaf);
			if (!want)
				continue;
		}
		tsc_khz = methods[i].fn();
		if (tsc_khz)
			tsc_source = methods[i].name;
	}
	if (!tsc_khz) {
		/* Nothing worked: assume 1 GHz so time still moves; say so loudly. */
		tsc_khz = 1000000;
		tsc_source = "guess";
		pr_warn("TSC frequency unknown, assuming 1 GHz\n");
	}
	ns_mult = (1000000ull << 32) / tsc_khz;
}
