// SPDX-License-Identifier: MIT
/* CPUID for each vCPU: KVM's supported leaves, fixed-up topology, and plugvm's leaves. */
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "plugvm_abi.h"

#define CPUID_ROOM 16 /* leaves plugvm may add */

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	uint32_t i;

	for (i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn &&
		    (!(c->entries[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) ||
		     c->entries[i].index == idx))
			return &c->entries[i];
	return NULL;
}

static struct kvm_cpuid_entry2 *add(struct kvm_cpuid2 *c, uint32_t fn)
{
	struct kvm_cpuid_entry2 *e = find(c, fn, 0);

	if (!e) {
		e = &c->entries[c->nent++];
		memset(e, 0, sizeof(*e));
		e->function = fn;
	}
	return e;
}

static unsigned order_base_2(unsigned n)
{
	unsigned s = 0;

	while ((1u << s) < n)
		s++;
	return s;
}

/* Leaves 0xB and 0x1F: one thread per core, every possible CPU a core of one package. */
static void fix_topology(struct kvm_cpuid2 *c, uint32_t fn, uint32_t apic_id, unsigned max_cpus)
{
	uint32_t i;

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function != fn)
			continue;
		e->edx = apic_id;
		if (e->index == 0) { /* SMT level */
			e->eax = 0;
			e->ebx = 1;
			e->ecx = (1u << 8) | 0;
		} else if (e->index == 1) { /* core level */
			e->eax = order_base_2(max_cpus);
			e->ebx = max_cpus;
			e->ecx = (2u << 8) | 1;
		} else { /* invalid: ends enumeration */
			e->eax = 0;
			e->ebx = 0;
			e->ecx = e->index;
		}
	}
}

struct kvm_cpuid2 *cpuid_build(const struct kvm_cpuid2 *supported, const struct cpuid_config *cfg,
			       uint32_t apic_id)
{
	size_t n = supported->nent + CPUID_ROOM;
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
	struct kvm_cpuid_entry2 *e;

	if (!c)
		return NULL;
	c->nent = supported->nent;
	memcpy(c->entries, supported->entries, supported->nent * sizeof(c->entries[0]));

	e = find(c, 1, 0);
	if (e) {
		e->ebx = (e->ebx & 0x0000ffffu) | (apic_id << 24) |
			 ((cfg->max_cpus > 255 ? 255u : cfg->max_cpus) << 16);
		e->ecx |= 1u << 31; /* hypervisor present */
		if (cfg->tsc_deadline)
			e->ecx |= 1u << 24;
		else
			e->ecx &= ~(1u << 24);
	}
	e = find(c, 7, 0);
	if (e && cfg->no_arch_caps)
		e->edx &= ~(1u << 29);
	fix_topology(c, 0xb, apic_id, cfg->max_cpus);
	fix_topology(c, 0x1f, apic_id, cfg->max_cpus);

	e = find(c, PLUGVM_CPUID_KVM_BASE, 0);
	if (e && cfg->tsc_khz && e->eax < PLUGVM_CPUID_TIMING)
		e->eax = PLUGVM_CPUID_TIMING;
	if (e && cfg->tsc_khz) {
		e = add(c, PLUGVM_CPUID_TIMING);
		e->eax = cfg->tsc_khz;
		e->ebx = PLUGVM_LAPIC_TIMER_KHZ;
	}
	e = add(c, PLUGVM_CPUID_BASE);
	e->eax = PLUGVM_CPUID_MAX;
	e->ebx = PLUGVM_CPUID_SIG_EBX;
	e->ecx = PLUGVM_CPUID_SIG_ECX;
	e->edx = PLUGVM_CPUID_SIG_EDX;
	e = add(c, PLUGVM_CPUID_INFO);
	e->eax = PLUGVM_ABI_VERSION;
	e->ebx = cfg->tsc_khz;
	e->ecx = PLUGVM_LAPIC_TIMER_KHZ;
	e->edx = cfg->features;
	return c;
}
