/* SPDX-License-Identifier: MIT */
/*
 * The arch API's functions: one set of prototypes and contracts, included by the guest's
 * arch.h (guest/arch/x86/) and by the host unit tests' stand-in (tests/unit/shim/arch.h),
 * so the two cannot drift. Each arch.h includes this and adds its constants, struct
 * arch_cpu and struct arch_context, and its inlines (interrupts, the TSC, per-CPU access,
 * port I/O); a prototype here that an arch.h also defines inline is a compile error, and
 * scripts/check-includes.sh refuses a function declared in either arch.h.
 */
#ifndef PLUGVM_GUEST_ARCH_API_H
#define PLUGVM_GUEST_ARCH_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arch_context;
struct cpu;

/* ---- threads ------------------------------------------------------------------------- */

/*
 * Save the running context in `prev` and continue `next` (which returns from its own
 * arch_context_switch, or starts at its entry). Interrupts off.
 */
void arch_context_switch(struct arch_context *prev, struct arch_context *next);
/*
 * Return addresses of a switched-out context (frame pointers), walking only inside its
 * stack [stack, stack + size). Returns how many of at most `max` were found.
 */
unsigned arch_context_backtrace(const struct arch_context *ctx, const void *stack, size_t size,
				uint64_t *pcs, unsigned max);
/* Prepare `ctx` so that switching to it calls entry(arg) on the stack ending at stack_top. */
void arch_context_init(struct arch_context *ctx, void *stack_top, void (*entry)(void *), void *arg);

/* ---- time ---------------------------------------------------------------------------- */

/* TSC frequency in kHz, and where it came from ("plugvm", "cpuid", "kvmclock", "pmtimer"). */
uint32_t arch_tsc_khz(void);
const char *arch_tsc_source(void);
/* Nanoseconds since boot, from the TSC. Any context. */
uint64_t arch_now_ns(void);
uint64_t arch_tsc_to_ns(uint64_t tsc);
/* Busy-wait at least `us` microseconds. */
void arch_udelay(uint64_t us);
/* Nanoseconds since boot -> TSC value. */
uint64_t arch_ns_to_tsc(uint64_t ns);

/*
 * The per-CPU clock event (LAPIC timer, vector VEC_LAPIC_TIMER). init: once per CPU, at
 * bring-up, interrupts off. set_deadline: interrupt at (or soon after) TSC value `tsc`,
 * replacing any earlier setting; a past deadline fires at once. stop: no interrupt.
 */
void arch_timer_init_cpu(void);
void arch_timer_set_deadline(uint64_t tsc);
void arch_timer_stop(void);
/* "tsc-deadline" or "oneshot", and the timer's rate in kHz. */
const char *arch_timer_mode(void);
uint32_t arch_timer_khz(void);

/* ---- CPUs ---------------------------------------------------------------------------- */

/* The LAPIC ID of the running CPU, read from the LAPIC. */
uint32_t arch_apic_id(void);
/* The running CPU's APIC ID as CPUID reports it (leaf 0xb, else leaf 1). */
uint32_t arch_cpuid_apic_id(void);
/* The running CPU's per-CPU base register (GS base). */
uint64_t arch_percpu_base(void);
/* True if the LAPIC runs in x2APIC mode. */
bool arch_x2apic(void);
/* TSC kHz by one named method ("plugvm", "cpuid-0x40000010", "kvmclock", "pmtimer"), or 0. */
uint32_t arch_tsc_khz_by(const char *method);
/*
 * How far the last PM-timer calibration may be off, in parts per million (its brackets'
 * slack and the long steps it could not rule out); 0 before one ran.
 */
uint32_t arch_tsc_pm_doubt_ppm(void);

/* Send IPI `vector` to the CPU with `apic_id`. Any context. */
void arch_send_ipi(uint32_t apic_id, unsigned vector);

/*
 * Register a handler for an interrupt vector; it runs with interrupts off and is EOI'd.
 * Returns 0, or -EINVAL for an exception or the spurious vector.
 */
typedef void (*arch_irq_handler)(unsigned vector, void *arg);
int arch_set_irq_handler(unsigned vector, arch_irq_handler fn, void *arg);

/* ---- devices ------------------------------------------------------------------------- */

/*
 * Deliver interrupt line `gsi` (an IOAPIC pin) to the boot CPU, which never goes offline,
 * as vector VEC_IRQ_BASE + gsi: fn(vector, arg) runs with interrupts off and is EOI'd after.
 * Level-triggered and/or active-low as the firmware says; unmasked. Boot or thread context.
 * Returns 0, or -EINVAL for a line the IOAPIC does not have.
 */
int arch_request_irq(unsigned gsi, bool level, bool active_low, arch_irq_handler fn, void *arg);

/* True if plugvm's CPUID leaf (this ABI major) offers the PLUGVM_FEATURE_* `bit`. */
bool arch_plugvm_feature(uint32_t bit);

/* ---- power ----------------------------------------------------------------------------- */

/*
 * Power the machine off: status 0 through ACPI S5, anything else through QEMU's
 * isa-debug-exit (VMM exit status (status << 1) | 1), falling back to S5. Never returns.
 */
__attribute__((noreturn)) void arch_poweroff(int status);

/* Print a backtrace of the current stack (frame pointers) to the console. */
void arch_backtrace(void);

/*
 * The NMI report's arch part (kernel/nmi.h). describe: this CPU's LAPIC as one line of text
 * into buf (NUL-terminated): vectors in service, requested and level-triggered, the LVT
 * timer and the clock event's deadline relative to now; NMI context, no locks. nmi_all: an
 * NMI to every CPU, this one included; any context.
 */
void arch_nmi_describe(char *buf, size_t len);
void arch_nmi_all(void);

/* Stop every other CPU (NMI); they halt for good. Panic path only. */
void arch_stop_other_cpus(void);

/* Interrupts off, halt, never return. */
__attribute__((noreturn)) void arch_halt_forever(void);

/*
 * Fault on purpose: "ud", "gp", "pf", "de", "bp", "df" (double fault) or "triple" (no IDT:
 * the hypervisor sees a triple fault). Returns only if `kind` is unknown.
 */
void arch_crash(const char *kind, size_t len);

/* ---- boot ------------------------------------------------------------------------------- */

/*
 * Secondary CPUs. The cpuhp steps (kernel/cpuhp_table.c) return 0 or -errno:
 * percpu:prepare (control CPU: per-CPU area and stacks) and its teardown (after death:
 * free the stacks); arch:starting and arch:dying (the CPU itself, interrupts off).
 */
int arch_smp_init(void); /* boot CPU, once: the start-up trampoline */
int arch_cpu_prepare(unsigned int cpu);
int arch_cpu_unprepare(unsigned int cpu);
int arch_cpu_starting(unsigned int cpu);
int arch_cpu_dying(unsigned int cpu);
void *arch_cpu_idle_stack(unsigned cpu);
int arch_cpu_kick(unsigned cpu); /* control CPU: start it (INIT-SIPI-SIPI) */
void arch_cpu_dead_cleanup(unsigned cpu); /* control CPU, after death */
__attribute__((noreturn)) void arch_cpu_dead(int *dead); /* store 1 to *dead, halt */

#endif
