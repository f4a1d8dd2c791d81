/* SPDX-License-Identifier: MIT */
/*
 * Kernel memory: a first-fit page allocator over one range of identity-mapped RAM (a
 * bitmap, 1 bit per page), and kmalloc size classes carved from pages. Both are
 * interrupt-safe. Memory is never handed back to the page allocator by kfree.
 */
#ifndef PLUGVM_KERNEL_MM_H
#define PLUGVM_KERNEL_MM_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096ul

/* Manage [start, end) (page-aligned inward); the bitmap lives at its start. Boot CPU only. */
void mm_init(uintptr_t start, uintptr_t end);

/* `n` contiguous pages, not zeroed; NULL if none. */
void *page_alloc(size_t n);
void *page_zalloc(size_t n);
/* Return pages from page_alloc(); `n` must match. Freeing a free page panics. */
void page_free(void *p, size_t n);

void *kmalloc(size_t size);
void *kzalloc(size_t size);
/* Free a kmalloc'd pointer (NULL is ignored). A foreign or double free panics. */
void kfree(void *p);

struct mm_stats {
	size_t total_pages;
	size_t free_pages;
	size_t kmalloc_bytes; /* bytes currently handed out by kmalloc */
};
void mm_get_stats(struct mm_stats *st);

#endif
