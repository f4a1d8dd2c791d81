// SPDX-License-Identifier: MIT
/* Exception reports: vector, error code, RIP, registers, a backtrace, then panic. */
#include "traps.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/nmi.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "lapic.h"
#include "x86.h"

extern char __kernel_start[], __kernel_end[];

static const char *const exception_names[32] = {
	[0] = "#DE divide error",
	[1] = "#DB debug",
	[2] = "NMI",
	[3] = "#BP breakpoint",
	[4] = "#OF overflow",
	[5] = "#BR bound range",
	[6] = "#UD invalid opcode",
	[7] = "#NM device not available",
	[8] = "#DF double fault",
	[9] = "coprocessor overrun",
	[10] = "#TS invalid TSS",
	[11] = "#NP segment not present",
	[12] = "#SS stack fault",
	[13] = "#GP general protection",
	[14] = "#PF page fault",
	[16] = "#MF x87 error",
	[17] = "#AC alignment check",
	[18] = "#MC machine check",
	[19] = "#XM SIMD error",
	[20] = "#VE virtualization",
	[21] = "#CP control protection",
};

static bool in_kernel(uint64_t addr)
{
	return addr >= (uint64_t)(uintptr_t)__kernel_start &&
	       addr < (uint64_t)(uintptr_t)__kernel_end;
}

/*
 * The return addresses of the frame chain from rbp (at most n): saved frame pointers followed
 * while they stay 8-byte aligned, below 4 GiB (identity-mapped, both words readable), going
 * up the stack, with return addresses inside the kernel.
 */
static unsigned frame_walk(uint64_t rbp, uint64_t *out, unsigned n)
{
	unsigned depth = 0;

	while (depth < n && rbp && !(rbp & 7) && rbp <= (1ull << 32) - 16) {
		uint64_t next = ((uint64_t *)(uintptr_t)rbp)[0];
		uint64_t ret = ((uint64_t *)(uintptr_t)rbp)[1];

		if (!in_kernel(ret))
			break;
		out[depth++] = ret;
		if (next <= rbp)
			break;
		rbp = next;
	}
	return depth;
}

/* Print rip and the frame chain from rbp as one line (one printk: other CPUs' output cannot
 * land in the middle). */
static void backtrace_from(uint64_t rbp, uint64_t rip)
{
	char line[16 + 17 * 19];
	uint64_t frames[16];
	unsigned n = frame_walk(rbp, frames, 16), i;
	size_t len;

	len = (size_t)snprintf(line, sizeof(line), "  backtrace: %#lx", (unsigned long)rip);
	for (i = 0; i < n && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %#lx",
					(unsigned long)frames[i]);
	printk("%s\n", line);
}

void arch_backtrace(void)
{
	/* Start at our caller: its return address, then its caller's frame. */
	backtrace_from(*(uint64_t *)__builtin_frame_address(0),
		       (uint64_t)(uintptr_t)__builtin_return_address(0));
}

void arch_stop_other_cpus(void)
{
	if (cpumask_weight(&cpu_online_mask) > 1)
		lapic_nmi_others();
}

static void dump_frame(const struct trap_frame *f)
{
	printk("  rip=%016lx rsp=%016lx rflags=%016lx cs=%lx ss=%lx\n", f->rip, f->rsp, f->rflags,
	       f->cs, f->ss);
	printk("  rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
	printk("  rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx\n", f->rsi, f->rdi, f->rbp, f->r8);
	printk("  r9 =%016lx r10=%016lx r11=%016lx r12=%016lx\n", f->r9, f->r10, f->r11, f->r12);
	printk("  r13=%016lx r14=%016lx r15=%016lx\n", f->r13, f->r14, f->r15);
	printk("  cr0=%016lx cr2=%016lx cr3=%016lx cr4=%016lx\n", read_cr0(), read_cr2(),
	       read_cr3(), read_cr4());
}

void trap_exception(struct trap_frame *f)
{
	const char *name = exception_names[f->vector] ? exception_names[f->vector] : "reserved";

	if (f->vector == 2) {
		/* NMIs are how a panicking CPU stops the others... */
		if (panic_in_progress())
			halt_forever();
		/* ... and how the host (inject-nmi) or the watchdog asks for a report. */
		uint64_t frames[NMI_FRAMES];
		unsigned n = frame_walk(f->rbp, frames, NMI_FRAMES);

		nmi_report(f->rip, f->rflags & (1u << 9), frames, n); /* RFLAGS.IF */
		return;
	}
	panic_enter();
	printk("PANIC: cpu %u: exception %s (vector %lu) error %#lx at rip %#lx\n",
	       smp_processor_id(), name, (unsigned long)f->vector, (unsigned long)f->error,
	       (unsigned long)f->rip);
	if (f->vector == 14)
		printk("  page fault address %#lx (%s, %s)\n", (unsigned long)read_cr2(),
		       f->error & 2 ? "write" : "read",
		       f->error & 1 ? "protection" : "not present");
	if (f->vector == 11 && (f->error & 2))
		printk("  interrupt on vector %lu, which has no handler\n",
		       (unsigned long)(f->error >> 3));
	dump_frame(f);
	backtrace_from(f->rbp, f->rip);
	panic_finish();
}
