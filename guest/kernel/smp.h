/* SPDX-License-Identifier: MIT */
/* Cross-CPU function calls over an IPI. */
#ifndef PLUGVM_KERNEL_SMP_H
#define PLUGVM_KERNEL_SMP_H

/* Register the call-function IPI. Boot CPU, once, before secondaries start. */
void smp_init(void);

/*
 * Run fn(arg) on `cpu` in interrupt context (interrupts off) and wait for it to finish.
 * Runs directly when `cpu` is the caller's. Returns 0, or -ENODEV if `cpu` is not online.
 * Must be called with interrupts enabled (two CPUs calling each other with interrupts
 * off would deadlock); it warns otherwise.
 */
int smp_call_on_cpu(unsigned cpu, void (*fn)(void *), void *arg);

/*
 * cpuhp step cpu:online-mask (kernel/cpuhp_table.c), on the CPU itself with interrupts
 * off: start taking calls, then join cpu_online_mask; the teardown leaves the mask, then
 * stops taking calls, running any call already claimed for it. Return 0.
 */
int smp_cpu_online(unsigned int cpu);
int smp_cpu_offline(unsigned int cpu);

#endif
