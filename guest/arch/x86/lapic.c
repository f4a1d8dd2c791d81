// SPDX-License-Identifier: MIT
/*
 * Local APIC: x2APIC through MSRs 0x800+ when CPUID offers it (needed for APIC IDs above
 * 254), xAPIC through MMIO at 0xfee00000 otherwise. The mode is per CPU but every CPU
 * makes the same choice, so one flag serves all.
 */
#include "lapic.h"

#include "arch.h"
#include "kernel/compiler.h"
#include "plugvm_abi.h"
#include "x86.h"

#define MSR_APIC_BASE	 0x1b
#define APIC_BASE_ENABLE (1ull << 11)
#define APIC_BASE_X2APIC (1ull << 10)
#define MSR_X2APIC_BASE	 0x800

static bool use_x2apic;

bool lapic_x2apic(void)
{
	return use_x2apic;
}

uint32_t lapic_read(uint32_t reg)
{
	if (use_x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_BASE + (reg >> 4));
	return *(volatile uint32_t *)(uintptr_t)(PLUGVM_LAPIC_BASE + reg);
}

void lapic_write(uint32_t reg, uint32_t v)
{
	if (use_x2apic)
		wrmsr(MSR_X2APIC_BASE + (reg >> 4), v);
	else
		*(volatile uint32_t *)(uintptr_t)(PLUGVM_LAPIC_BASE + reg) = v;
}

void lapic_eoi(void)
{
	lapic_write(APIC_EOI, 0);
}

uint32_t arch_apic_id(void)
{
	uint32_t id = lapic_read(APIC_ID);

	return use_x2apic ? id : id >> 24;
}

uint32_t arch_cpuid_apic_id(void)
{
	if (cpuid(0, 0).eax >= 0xb && cpuid(0xb, 0).ebx)
		return cpuid(0xb, 0).edx;
	return cpuid(1, 0).ebx >> 24;
}

bool arch_x2apic(void)
{
	return use_x2apic;
}

uint64_t arch_percpu_base(void)
{
	return rdmsr(0xc0000101);
}

void lapic_send_icr(uint32_t apic_id, uint32_t icr)
{
	if (use_x2apic) {
		/* x2APIC ICR is one 64-bit MSR; no delivery-status polling is needed. */
		wrmsr(MSR_X2APIC_BASE + (APIC_ICR_LO >> 4), ((uint64_t)apic_id << 32) | icr);
		return;
	}
	while (lapic_read(APIC_ICR_LO) & APIC_ICR_BUSY)
		arch_cpu_relax();
	lapic_write(APIC_ICR_HI, apic_id << 24);
	lapic_write(APIC_ICR_LO, icr);
}

void arch_send_ipi(uint32_t apic_id, unsigned vector)
{
	lapic_send_icr(apic_id, vector & 0xff);
}

void lapic_nmi_others(void)
{
	if (use_x2apic)
		wrmsr(MSR_X2APIC_BASE + (APIC_ICR_LO >> 4), APIC_DEST_ALLBUT | APIC_DM_NMI);
	else
		lapic_send_icr(0, APIC_DEST_ALLBUT | APIC_DM_NMI);
}

void arch_nmi_all(void)
{
	if (use_x2apic)
		wrmsr(MSR_X2APIC_BASE + (APIC_ICR_LO >> 4), APIC_DEST_ALLINC | APIC_DM_NMI);
	else
		lapic_send_icr(0, APIC_DEST_ALLINC | APIC_DM_NMI);
}

void lapic_init_cpu(bool fresh)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	if (cpuid(1, 0).ecx & (1u << 21)) {
		use_x2apic = true;
		/* xAPIC -> x2APIC requires the global enable first. */
		if (!(base & APIC_BASE_ENABLE))
			wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE);
		if (!(base & APIC_BASE_X2APIC))
			wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE | APIC_BASE_X2APIC);
	} else if (!(base & APIC_BASE_ENABLE)) {
		wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE);
	}
	/*
	 * An AP's LAPIC holds these already (each write is an exit): after INIT or plugvm's
	 * reset of a hot-added vCPU, TPR 0 and every LVT masked (SDM 10.4.7.1); after this
	 * kernel took the CPU offline, what lapic_init_cpu() and arch_cpu_dying() left. The
	 * boot CPU's may hold firmware's (LINT0 in ExtINT mode).
	 */
	if (!fresh) {
		lapic_write(APIC_TPR, 0);
		lapic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
		lapic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
		lapic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	}
	lapic_write(APIC_LVT_LINT1, APIC_DM_NMI);
	lapic_write(APIC_SVR, 0x100 | VEC_SPURIOUS);
}
