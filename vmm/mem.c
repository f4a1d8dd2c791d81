// SPDX-License-Identifier: MIT
/* Guest RAM regions and the checked gpa -> hva accessor. */
#include "mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "x86/layout.h"

static int map_region(struct mem_region *r, gpa_t gpa, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		int err = errno;

		log_error("guest memory: cannot map %llu MiB: %s", (unsigned long long)(size >> 20),
			  strerror(err));
		return -err;
	}
	madvise(p, size, MADV_MERGEABLE);
	madvise(p, size, MADV_NOHUGEPAGE); /* mem_set_thp() */
	r->gpa = gpa;
	r->size = size;
	r->hva = p;
	return 0;
}

int mem_init(struct guest_mem *m, uint64_t size)
{
	uint64_t low = size < LAYOUT_LOW_RAM_MAX ? size : LAYOUT_LOW_RAM_MAX;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = map_region(&m->regions[0], 0, low);
	if (ret)
		return ret;
	m->nr_regions = 1;
	if (size > low) {
		ret = map_region(&m->regions[1], LAYOUT_HIGH_RAM_BASE, size - low);
		if (ret) {
			mem_destroy(m);
			return ret;
		}
		m->nr_regions = 2;
	}
	m->size = size;
	m->fresh = true;
	return 0;
}

void mem_set_thp(struct guest_mem *m, bool on)
{
	int i;

	for (i = 0; i < m->nr_regions; i++)
		madvise(m->regions[i].hva, m->regions[i].size,
			on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

int mem_clear(struct guest_mem *m)
{
	int i;

	for (i = 0; i < m->nr_regions; i++)
		if (madvise(m->regions[i].hva, m->regions[i].size, MADV_DONTNEED) < 0)
			return -errno;
	m->fresh = true;
	return 0;
}

void mem_destroy(struct guest_mem *m)
{
	int i;

	for (i = 0; i < m->nr_regions; i++)
		munmap(m->regions[i].hva, m->regions[i].size);
	m->nr_regions = 0;
}

void *mem_gpa_ptr(const struct guest_mem *m, gpa_t gpa, uint64_t len)
{
	int i;

	for (i = 0; i < m->nr_regions; i++) {
		const struct mem_region *r = &m->regions[i];

		if (gpa >= r->gpa && gpa - r->gpa <= r->size && len <= r->size - (gpa - r->gpa))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}

uint64_t mem_low_end(const struct guest_mem *m)
{
	return m->nr_regions ? m->regions[0].size : 0;
}
