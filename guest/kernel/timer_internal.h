/* SPDX-License-Identifier: MIT */
/* What timer.c (the wheels, expiry, requests) and tick.c (jiffies, the tick) share. */
#ifndef PLUGVM_KERNEL_TIMER_INTERNAL_H
#define PLUGVM_KERNEL_TIMER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpu.h"
#include "kernel/hrtimer.h"
#include "kernel/timer.h"

static inline struct timer_base *this_base(void)
{
	return &this_cpu()->tmr;
}

static inline struct timer_base *cpu_base(unsigned cpu)
{
	return &cpu_table[cpu]->tmr;
}

/* Advance jiffies to the clock (any CPU, never backwards); returns the new value. */
uint64_t jiffies_update(void);
/* Is any timer of b due at jiffy `now` (or collected and not yet run)? */
bool timers_due(struct timer_base *b, uint64_t now);
/* Fault injection (selftests): spin for *knob ns if it is set (timer_expiry_delay_ns and
 * tick_idle_delay_ns). */
void timer_fault_delay(const uint64_t *knob);
/* Have b's timers run: the softirq at interrupt exit, or (RT) the timer thread. */
void timers_raise_softirq(struct timer_base *b);
/* The tick's hrtimer callback (each CPU's b->tick). */
enum hrtimer_restart tick_hrtimer_fn(struct hrtimer *h);
/* Boot, once: HZ, jiffies, the clock-event interrupt. */
void tick_init(void);

#endif
