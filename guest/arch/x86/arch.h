/* SPDX-License-Identifier: MIT */
/*
 * The x86 arch layer's interface to guest/kernel: the only arch header kernel code may
 * include. Host unit tests provide their own arch.h (tests/unit/shim/) with the same
 * names, so everything here is either a small inline or a declared function.
 */
#ifndef PLUGVM_GUEST_ARCH_H
#define PLUGVM_GUEST_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acpi.h" /* struct acpi_info, acpi_get_info(): the firmware tables, read at boot */

#define ARCH_PAGE_SIZE 4096ul
#define ARCH_CACHELINE 64

/* Interrupt vectors the kernel uses. */
#define VEC_IRQ_BASE	0x20 /* IOAPIC pin N -> VEC_IRQ_BASE + N */
#define VEC_LAPIC_TIMER 0xef
#define VEC_CALL_FUNC	0xf0
#define VEC_RESCHEDULE	0xf1
#define VEC_SPURIOUS	0xff

/* Per-CPU architecture state embedded in struct cpu (kernel/cpu.h). */
struct arch_tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct arch_cpu {
	uint64_t gdt[6] __attribute__((aligned(16)));
	struct arch_tss tss __attribute__((aligned(16)));
	void *stack; /* kernel stack (CPU_STACK_SIZE) */
	void *ist_stack; /* double-fault / NMI stack */
};

/* A switched-out thread's registers: callee-saved ones live on its stack below rsp. */
struct arch_context {
	uint64_t rsp;
};

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

/* ---- interrupts ---------------------------------------------------------------------- */

static inline unsigned long arch_irq_save(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void arch_irq_restore(unsigned long flags)
{
	if (flags & 0x200)
		__asm__ volatile("sti" : : : "memory");
}

static inline void arch_irq_enable(void)
{
	__asm__ volatile("sti" : : : "memory");
}

static inline void arch_irq_disable(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline bool arch_irqs_enabled(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags & 0x200;
}

static inline void arch_cpu_relax(void)
{
	__asm__ volatile("pause" : : : "memory");
}

/* Enable interrupts and halt until one arrives (atomic: no wake-up is lost). */
static inline void arch_safe_halt(void)
{
	__asm__ volatile("sti; hlt" : : : "memory");
}

/* ---- time ---------------------------------------------------------------------------- */

static inline uint64_t arch_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

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

struct cpu;

/*
 * The running CPU's struct cpu (GS base points at it; its first field points at itself).
 * Raw: kernel code uses this_cpu() (kernel/cpu.h), which checks that the caller cannot
 * migrate while it uses the pointer.
 */
static inline struct cpu *arch_this_cpu(void)
{
	struct cpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
}

/*
 * Read or add to a field of the running CPU's struct cpu in one instruction: a thread
 * preempted and migrated just before or after it still gets (or changes) the value of the
 * CPU it ran the instruction on, never a mix of two CPUs.
 */
static inline int arch_percpu_read_int(size_t offset)
{
	int v;

	__asm__ volatile("movl %%gs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
	return v;
}

static inline void *arch_percpu_read_ptr(size_t offset)
{
	void *v;

	__asm__ volatile("movq %%gs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
	return v;
}

static inline void arch_percpu_add_int(size_t offset, int v)
{
	__asm__ volatile("addl %1, %%gs:(%0)" : : "r"(offset), "r"(v) : "memory", "cc");
}

/* The LAPIC ID of the running CPU, read from the LAPIC. */
uint32_t arch_apic_id(void);
/* The running CPU's APIC ID as CPUID reports it (leaf 0xb, else leaf 1). */
uint32_t arch_cpuid_apic_id(void);
/* The running CPU's per-CPU base register (GS base). */
uint64_t arch_percpu_base(void);
/* True if the LAPIC runs in x2APIC mode. */
bool arch_x2apic(void);
/* Size of each CPU's kernel stack; struct arch_cpu.stack points at its lowest byte. */
#define ARCH_CPU_STACK_SIZE 16384ul
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

/* ---- devices: port I/O, interrupt lines, the hypervisor ----------------------------------- */

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* String output: one VM exit for the whole burst under KVM. */
static inline void outsb(uint16_t port, const void *p, unsigned long n)
{
	__asm__ volatile("rep outsb" : "+S"(p), "+c"(n) : "d"(port) : "memory");
}

/* The same with n 32-bit words. */
static inline void outsl(uint16_t port, const void *p, unsigned long n)
{
	__asm__ volatile("rep outsl" : "+S"(p), "+c"(n) : "d"(port) : "memory");
}

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
