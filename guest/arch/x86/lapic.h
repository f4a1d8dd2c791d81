/* SPDX-License-Identifier: MIT */
/* Local APIC access in x2APIC (MSR) or xAPIC (MMIO) mode, chosen once per CPU at init. */
#ifndef PLUGVM_GUEST_X86_LAPIC_H
#define PLUGVM_GUEST_X86_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define APIC_ID	       0x020
#define APIC_VERSION   0x030
#define APIC_TPR       0x080
#define APIC_EOI       0x0b0
#define APIC_LDR       0x0d0
#define APIC_DFR       0x0e0
#define APIC_SVR       0x0f0
#define APIC_ESR       0x280
#define APIC_ICR_LO    0x300
#define APIC_ICR_HI    0x310
#define APIC_ISR       0x100 /* 8 registers, 0x10 apart: vectors 32 per register */
#define APIC_TMR       0x180
#define APIC_IRR       0x200
#define APIC_LVT_TIMER 0x320
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define APIC_TMR_INIT  0x380
#define APIC_TMR_CUR   0x390
#define APIC_TMR_DIV   0x3e0

#define APIC_LVT_MASKED	  (1u << 16)
#define APIC_DM_NMI	  0x400
#define APIC_DM_INIT	  0x500
#define APIC_DM_STARTUP	  0x600
#define APIC_LEVEL_ASSERT 0x4000
#define APIC_ICR_BUSY	  0x1000
#define APIC_DEST_ALLINC  0x80000
#define APIC_DEST_ALLBUT  0xc0000

/* Enable this CPU's LAPIC (x2APIC if the CPU has it), spurious vector, LINTs masked/NMI. */
void lapic_init_cpu(bool fresh);
bool lapic_x2apic(void);
uint32_t lapic_read(uint32_t reg);
void lapic_write(uint32_t reg, uint32_t v);
void lapic_eoi(void);
/* Send an ICR command (low word `icr`, e.g. APIC_DM_INIT) to `apic_id`. */
void lapic_send_icr(uint32_t apic_id, uint32_t icr);
/* NMI to every other CPU. */
void lapic_nmi_others(void);

#endif
