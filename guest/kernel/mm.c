// SPDX-License-Identifier: MIT
/*
 * Page allocator (bitmap, first fit from a hint) and kmalloc (power-of-two classes from
 * 32 to 2048 bytes, larger requests get whole pages). Each kmalloc object carries a
 * 16-byte header naming its class, so kfree needs no size and catches bad frees.
 */
#include "kernel/mm.h"

#include "kernel/compiler.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"

static struct spinlock page_lock = SPINLOCK_INIT("pages");
/* Guarded by page_lock: */
static uintptr_t base; /* address of page 0 */
static size_t nr_pages;
static size_t nr_free;
static uint64_t *bitmap; /* 1 = in use */
static size_t hint; /* no free page below this index */
static size_t first_page; /* pages below this one hold the bitmap */

static bool page_used(size_t i)
{
	return (bitmap[i / 64] >> (i % 64)) & 1;
}

static void mark(size_t first, size_t n, bool used)
{
	size_t i = first, end = first + n;

	/* Bit by bit to a word boundary, then whole words: boot marks thousands of pages. */
	while (i < end && i % 64) {
		if (used)
			bitmap[i / 64] |= 1ull << (i % 64);
		else
			bitmap[i / 64] &= ~(1ull << (i % 64));
		i++;
	}
	for (; i + 64 <= end; i += 64)
		bitmap[i / 64] = used ? ~0ull : 0;
	for (; i < end; i++) {
		if (used)
			bitmap[i / 64] |= 1ull << (i % 64);
		else
			bitmap[i / 64] &= ~(1ull << (i % 64));
	}
}

void mm_init(uintptr_t start, uintptr_t end)
{
	size_t map_pages;

	start = ALIGN_UP(start, PAGE_SIZE);
	end = ALIGN_DOWN(end, PAGE_SIZE);
	if (end <= start + 2 * PAGE_SIZE)
		panic("mm: no usable memory in [%#lx, %#lx)", (unsigned long)start,
		      (unsigned long)end);
	base = start;
	nr_pages = (end - start) / PAGE_SIZE;
	map_pages = DIV_ROUND_UP(DIV_ROUND_UP(nr_pages, 64) * 8, PAGE_SIZE);
	bitmap = (uint64_t *)start;
	memset(bitmap, 0, map_pages * PAGE_SIZE);
	/* Bits past the end of memory stay "used" so searches never run off. */
	mark(nr_pages, map_pages * PAGE_SIZE * 8 - nr_pages, true);
	mark(0, map_pages, true);
	nr_free = nr_pages - map_pages;
	hint = map_pages;
	first_page = map_pages;
}

/* First run of n free pages at or after `from`; returns nr_pages if none. */
static size_t find_run(size_t from, size_t n)
{
	size_t i = from, run = 0, start = from;

	while (i < nr_pages) {
		uint64_t w = bitmap[i / 64];

		if (i % 64 == 0 && w == ~0ull) {
			i += 64;
			run = 0;
			start = i;
			continue;
		}
		if (i % 64 == 0 && w == 0 && n > 1) {
			if (!run)
				start = i;
			run += 64;
			i += 64;
		} else if (page_used(i)) {
			run = 0;
			start = ++i;
			continue;
		} else {
			if (!run)
				start = i;
			run++;
			i++;
		}
		if (run >= n)
			return start;
	}
	return nr_pages;
}

void *page_alloc(size_t n)
{
	unsigned long flags;
	size_t first;
	void *p = NULL;

	if (!n)
		return NULL;
	flags = spin_lock_irqsave(&page_lock);
	first = find_run(hint, n);
	if (first + n <= nr_pages) {
		mark(first, n, true);
		nr_free -= n;
		if (first == hint)
			hint = first + n;
		p = (void *)(base + first * PAGE_SIZE);
	}
	spin_unlock_irqrestore(&page_lock, flags);
	return p;
}

void *page_zalloc(size_t n)
{
	void *p = page_alloc(n);

	if (p)
		memset(p, 0, n * PAGE_SIZE);
	return p;
}

void page_free(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	unsigned long flags;
	size_t first, i;

	if (!p)
		return;
	/*
	 * The bitmap's own pages look allocated but were never handed out; compare the
	 * count with what is left so that a huge n cannot wrap index + n.
	 */
	if (a < base + first_page * PAGE_SIZE || (a - base) % PAGE_SIZE ||
	    (a - base) / PAGE_SIZE > nr_pages || n > nr_pages - (a - base) / PAGE_SIZE)
		panic("page_free: %p (%zu pages) is not allocator memory", p, n);
	first = (a - base) / PAGE_SIZE;
	flags = spin_lock_irqsave(&page_lock);
	for (i = first; i < first + n; i++)
		if (!page_used(i))
			panic("page_free: page %p freed twice", (void *)(base + i * PAGE_SIZE));
	mark(first, n, false);
	nr_free += n;
	if (first < hint)
		hint = first;
	spin_unlock_irqrestore(&page_lock, flags);
}

/* ---- kmalloc ------------------------------------------------------------------------ */

#define KM_MIN_SHIFT 5
#define KM_MAX_SHIFT 11
#define KM_CLASSES   (KM_MAX_SHIFT - KM_MIN_SHIFT + 1)
#define KM_MAGIC     0x6b6d616cu /* "kmal" */
#define KM_LARGE     0xffu

struct km_header {
	uint32_t magic;
	uint8_t cls; /* size class, or KM_LARGE */
	uint8_t in_use;
	uint16_t reserved;
	uint64_t npages; /* KM_LARGE only */
};
_Static_assert(sizeof(struct km_header) == 16, "kmalloc keeps 16-byte alignment");

/* A free object: the header's first 8 bytes (magic, class, in_use = 0) stay intact. */
struct km_free {
	uint64_t header_word;
	struct km_free *next;
};

static struct spinlock km_lock = SPINLOCK_INIT("kmalloc");
static struct km_free *km_lists[KM_CLASSES]; /* guarded by km_lock */
static size_t km_bytes; /* guarded by km_lock */

static int size_class(size_t total)
{
	int c = 0;

	while ((1ul << (c + KM_MIN_SHIFT)) < total)
		c++;
	return c;
}

void *kmalloc(size_t size)
{
	size_t total = size + sizeof(struct km_header);
	struct km_header *h;
	unsigned long flags;
	int c;

	if (size > (1ul << 30))
		return NULL;
	if (total > (1ul << KM_MAX_SHIFT)) {
		size_t np = DIV_ROUND_UP(total, PAGE_SIZE);

		h = page_alloc(np);
		if (!h)
			return NULL;
		*h = (struct km_header){ KM_MAGIC, KM_LARGE, 1, 0, np };
		flags = spin_lock_irqsave(&km_lock);
		km_bytes += np * PAGE_SIZE;
		spin_unlock_irqrestore(&km_lock, flags);
		return h + 1;
	}
	c = size_class(total);
	flags = spin_lock_irqsave(&km_lock);
	if (!km_lists[c]) {
		size_t objsz = 1ul << (c + KM_MIN_SHIFT), i;
		char *page;

		spin_unlock_irqrestore(&km_lock, flags);
		page = page_alloc(1);
		if (!page)
			return NULL;
		flags = spin_lock_irqsave(&km_lock);
		for (i = 0; i + objsz <= PAGE_SIZE; i += objsz) {
			struct km_free *f = (struct km_free *)(page + i);

			f->header_word = 0;
			f->next = km_lists[c];
			km_lists[c] = f;
		}
	}
	h = (struct km_header *)km_lists[c];
	km_lists[c] = km_lists[c]->next; /* read before the header overwrites it */
	km_bytes += 1ul << (c + KM_MIN_SHIFT);
	spin_unlock_irqrestore(&km_lock, flags);
	*h = (struct km_header){ KM_MAGIC, (uint8_t)c, 1, 0, 0 };
	return h + 1;
}

void *kzalloc(size_t size)
{
	void *p = kmalloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}

void kfree(void *p)
{
	struct km_header *h;
	unsigned long flags;
	struct km_free *f;
	unsigned cls;

	if (!p)
		return;
	h = (struct km_header *)p - 1;
	if (h->magic != KM_MAGIC || !h->in_use || (h->cls >= KM_CLASSES && h->cls != KM_LARGE))
		panic("kfree: %p is not a live kmalloc object", p);
	h->in_use = 0;
	if (h->cls == KM_LARGE) {
		size_t np = h->npages;

		flags = spin_lock_irqsave(&km_lock);
		km_bytes -= np * PAGE_SIZE;
		spin_unlock_irqrestore(&km_lock, flags);
		page_free(h, np);
		return;
	}
	cls = h->cls;
	f = (struct km_free *)h;
	flags = spin_lock_irqsave(&km_lock);
	km_bytes -= 1ul << (cls + KM_MIN_SHIFT);
	f->next = km_lists[cls];
	km_lists[cls] = f;
	spin_unlock_irqrestore(&km_lock, flags);
}

void mm_get_stats(struct mm_stats *st)
{
	unsigned long flags = spin_lock_irqsave(&page_lock);

	st->total_pages = nr_pages;
	st->free_pages = nr_free;
	spin_unlock_irqrestore(&page_lock, flags);
	flags = spin_lock_irqsave(&km_lock);
	st->kmalloc_bytes = km_bytes;
	spin_unlock_irqrestore(&km_lock, flags);
}
