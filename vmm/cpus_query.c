// SPDX-License-Identifier: MIT
/*
 * Read-only views of the vCPU slots (present, ids, thread ids, statistics fds) and the
 * calls that reach every running vCPU at once (NMIs, register dumps). A slot's state is
 * only read here; cpus.c alone changes it.
 */
#include "cpus.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cpus_internal.h"
#include "vcpu.h"

bool cpus_present(const struct cpus *c, unsigned slot)
{
	return slot < c->nr && atomic_load(&c->slots[slot].state) == SLOT_RUNNING;
}

int cpus_stats_fd(const struct cpus *c, unsigned slot)
{
	return slot < c->nr ? c->slots[slot].vcpu.stats_fd : -1;
}

pid_t cpus_tid(const struct cpus *c, unsigned slot)
{
	return slot < c->nr ? vcpu_tid(&c->slots[slot].vcpu) : 0;
}

const char *cpus_id(const struct cpus *c, unsigned slot)
{
	return slot < c->nr ? c->slots[slot].id : NULL;
}

unsigned cpus_inject_nmi(struct cpus *c)
{
	unsigned i, n = 0;

	/* Under the lock: a RUNNING thread is not joined before its kick. */
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->nr; i++) {
		if (atomic_load(&c->slots[i].state) == SLOT_RUNNING) {
			vcpu_post_nmi(&c->slots[i].vcpu);
			n++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

void cpus_dump(struct cpus *c)
{
	unsigned i;

	for (i = 0; i < c->nr; i++)
		if (c->slots[i].vcpu.fd >= 0)
			vcpu_dump(&c->slots[i].vcpu, NULL, 0);
}
