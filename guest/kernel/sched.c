// SPDX-License-Identifier: MIT
/* The scheduler. Until threads exist there is never anything else to run. */
#include "kernel/preempt.h"

bool need_resched(void)
{
	return false;
}

void preempt_schedule(void)
{
}
