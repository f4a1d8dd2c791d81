// SPDX-License-Identifier: MIT
/*
 * The per-CPU clock event: the LAPIC timer, in TSC-deadline mode when CPUID offers it
 * (deadlines are TSC values, no conversion, no 32-bit range limit), one-shot mode
 * otherwise (the count is converted from TSC cycles at the LAPIC timer's rate, from CPUID
 * or calibrated against the TSC at boot; deadlines beyond its range fire early and the
 * kernel's timer code simply re-arms).
 */
#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "lapic.h"
#include "plugvm_abi.h"
#include "x86.h"

CMDLINE_PARAM(clockevent, .name = "clockevent", .kind = CMDLINE_ENUM,
	      .choices = "tsc-deadline|oneshot");

#define MSR_TSC_DEADLINE       0x6e0
#define LVT_TIMER_ONESHOT      (0u << 17)
#define LVT_TIMER_TSC_DEADLINE (2u << 17)
#define TDCR_DIV_1	       0xb

static bool tsc_deadline;
static uint32_t lapic_khz; /* one-shot mode: timer ticks per ms */

const char *arch_timer_mode(void)
{
	return tsc_deadline ? "tsc-deadline" : "oneshot";
}

uint32_t arch_timer_khz(void)
{
	return tsc_deadline ? arch_tsc_khz() : lapic_khz;
}

/* LAPIC timer rate: CPUID (plugvm leaf, then the timing leaf), else measured against the TSC. */
static uint32_t find_lapic_khz(void)
{
	struct cpuid_regs r;
	uint64_t t0, t1;
	uint32_t start, left;

	if (plugvm_info(&r) && r.ecx)
		return r.ecx;
	if ((cpuid(1, 0).ecx & (1u << 31)) &&
	    cpuid(PLUGVM_CPUID_KVM_BASE, 0).eax >= PLUGVM_CPUID_TIMING &&
	    cpuid(PLUGVM_CPUID_TIMING, 0).ebx)
		return cpuid(PLUGVM_CPUID_TIMING, 0).ebx;
	/* Count down from the top for 10 ms of TSC time. */
	lapic_write(APIC_TMR_DIV, TDCR_DIV_1);
	lapic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | LVT_TIMER_ONESHOT | VEC_LAPIC_TIMER);
	start = 0xffffffffu;
	lapic_write(APIC_TMR_INIT, start);
	t0 = arch_tsc();
	arch_udelay(10000);
	left = lapic_read(APIC_TMR_CUR);
	t1 = arch_tsc();
	lapic_write(APIC_TMR_INIT, 0);
	return (uint32_t)((uint64_t)(start - left) * arch_tsc_khz() / (t1 - t0));
}

void arch_timer_init_cpu(void)
{
	static bool decided;

	if (!decided) {
		size_t len;
		const char *force = cmdline_value("clockevent", &len);

		tsc_deadline = (cpuid(1, 0).ecx & (1u << 24)) &&
			       !(force && len == 7 && !memcmp(force, "oneshot", 7));
		if (!tsc_deadline)
			lapic_khz = find_lapic_khz();
		decided = true;
	}
	if (tsc_deadline) {
		lapic_write(APIC_LVT_TIMER, LVT_TIMER_TSC_DEADLINE | VEC_LAPIC_TIMER);
		wrmsr(MSR_TSC_DEADLINE, 0);
	} else {
		lapic_write(APIC_TMR_DIV, TDCR_DIV_1);
		lapic_write(APIC_LVT_TIMER, LVT_TIMER_ONESHOT | VEC_LAPIC_TIMER);
		lapic_write(APIC_TMR_INIT, 0);
	}
}

void arch_timer_set_deadline(uint64_t deadline_tsc)
{
	uint64_t now, ticks;

	if (tsc_deadline) {
		/* 0 disarms: ask for "now" instead, the interrupt comes at once. */
		wrmsr(MSR_TSC_DEADLINE, deadline_tsc ? deadline_tsc : 1);
		return;
	}
	now = arch_tsc();
	ticks = deadline_tsc > now ? (deadline_tsc - now) * lapic_khz / arch_tsc_khz() : 0;
	if (ticks == 0)
		ticks = 1;
	if (ticks > 0xffffffffu)
		ticks = 0xffffffffu; /* early expiry; the timer code re-arms */
	lapic_write(APIC_TMR_INIT, (uint32_t)ticks);
}

/* The vectors set in the 256-bit register bank at `reg` as "ef,f1" ("-": none). */
static size_t put_vectors(char *buf, size_t len, uint32_t reg)
{
	size_t n = 0;
	unsigned i, bit;

	for (i = 0; i < 8; i++) {
		uint32_t v = lapic_read(reg + 0x10 * i);

		for (bit = 0; bit < 32 && v; bit++, v >>= 1)
			if ((v & 1) && n + 4 < len)
				n += (size_t)snprintf(buf + n, len - n, "%s%x", n ? "," : "",
						      i * 32 + bit);
	}
	if (!n && len > 1)
		n = (size_t)snprintf(buf, len, "-");
	return n;
}

void arch_nmi_describe(char *buf, size_t len)
{
	char isr[40], irr[40], tmr[40];
	uint32_t lvtt = lapic_read(APIC_LVT_TIMER);

	put_vectors(isr, sizeof(isr), APIC_ISR);
	put_vectors(irr, sizeof(irr), APIC_IRR);
	put_vectors(tmr, sizeof(tmr), APIC_TMR);
	if (tsc_deadline) {
		uint64_t deadline = rdmsr(MSR_TSC_DEADLINE), now = arch_tsc();
		/* Convert the distance, not the two values (they would overflow the scaling). */
		long us = deadline >= now ? (long)(arch_tsc_to_ns(deadline - now) / 1000)
					  : -(long)(arch_tsc_to_ns(now - deadline) / 1000);

		if (deadline)
			snprintf(buf, len,
				 "isr %s irr %s tmr %s lvtt %#x%s, tsc-deadline in %ld us", isr,
				 irr, tmr, lvtt, (lvtt & APIC_LVT_MASKED) ? " (masked)" : "", us);
		else
			snprintf(buf, len,
				 "isr %s irr %s tmr %s lvtt %#x%s, tsc-deadline 0 (off or "
				 "fired)",
				 isr, irr, tmr, lvtt, (lvtt & APIC_LVT_MASKED) ? " (masked)" : "");
	} else {
		snprintf(buf, len, "isr %s irr %s tmr %s lvtt %#x%s, one-shot count %u", isr, irr,
			 tmr, lvtt, (lvtt & APIC_LVT_MASKED) ? " (masked)" : "",
			 lapic_read(APIC_TMR_CUR));
	}
}

void arch_timer_stop(void)
{
	if (tsc_deadline)
		wrmsr(MSR_TSC_DEADLINE, 0);
	else
		lapic_write(APIC_TMR_INIT, 0);
}
