/* SPDX-License-Identifier: MIT */
/*
 * The guest kernel loader: an ELF64 x86-64 executable with a PVH entry note
 * (XEN_ELFNOTE_PHYS32_ENTRY). PT_LOAD segments go to their physical addresses; the file is
 * hostile input, so every offset, size and address is checked before use.
 */
#ifndef PLUGVM_VMM_LOADER_H
#define PLUGVM_VMM_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

#define LOADER_MAX_FILE_BYTES (512ull << 20)

struct loaded_kernel {
	uint32_t entry; /* 32-bit PVH entry (guest-physical) */
	gpa_t lowest; /* lowest byte loaded */
	gpa_t highest; /* one past the highest byte loaded (incl. bss) */
};

/*
 * Load an ELF image held in memory into guest RAM. Returns 0, or -ENOEXEC (not an x86-64
 * ELF executable, malformed headers, no PVH note) / -E2BIG (a segment does not fit guest
 * RAM at or above 1 MiB) with a one-line reason in err.
 */
int loader_load_elf(struct guest_mem *m, const uint8_t *img, size_t len, struct loaded_kernel *out,
		    char *err, size_t errlen);

/*
 * How much of an image loader_load_elf() accepted it reads: the bytes up to the end of the
 * last of the ELF header, the program header table and the PT_NOTE and PT_LOAD contents.
 * Loading that prefix puts the same bytes in guest RAM with the same entry; the rest
 * (section headers, symbols, debug information: most of a kernel built with -g) is never
 * read, so the image kept for a reset need not hold it (test_loader.c:
 * test_kept_prefix_loads_the_same).
 */
size_t loader_elf_kept_len(const uint8_t *img, size_t len);

/*
 * Read the regular file `path` (at most LOADER_MAX_FILE_BYTES and `max` bytes) into *img
 * (malloc'd; the caller frees it), its size in *len. Never blocks in open(): a FIFO, a device
 * or a directory is -EINVAL "not a regular file" (test_errors.py:
 * test_kernel_that_is_not_a_regular_file_is_refused_without_blocking). Returns 0 or -errno
 * with err naming the file and the reason.
 */
int loader_read_file(const char *path, uint64_t max, uint8_t **img, size_t *len, char *err,
		     size_t errlen);

/* loader_load_elf() of an image read from `path`, err prefixed with the file's name. */
int loader_load_image(struct guest_mem *m, const char *path, const uint8_t *img, size_t len,
		      struct loaded_kernel *out, char *err, size_t errlen);

#endif
