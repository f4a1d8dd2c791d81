// SPDX-License-Identifier: MIT
/* ELF64 + PVH note loader. Every field of the file is checked before it is used. */
#include "loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pvh.h"
#include "x86/layout.h"

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* True if [off, off + size) lies inside a buffer of `len` bytes. */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

/* x rounded up to `align` (a power of two), without wrapping: UINT64_MAX if it would. */
static uint64_t round_up(uint64_t x, uint64_t align)
{
	return x > UINT64_MAX - (align - 1) ? UINT64_MAX : (x + align - 1) & ~(align - 1);
}

/*
 * Find the PVH entry in one PT_NOTE segment; 1 found, 0 not there, -ENOEXEC malformed.
 * Each note is laid out as Linux and binutils do (gABI): the descriptor starts at the
 * header plus name rounded up to the segment's alignment (4 or 8), the next note at the
 * descriptor's end rounded up the same way. With 4, name and descriptor are each padded
 * to 4, which is what QEMU reads; 8-byte aligned notes (.note.gnu.property in every static
 * binary) differ, and are only skipped on the way to the PVH note.
 */
static int scan_notes(const uint8_t *p, uint64_t size, uint64_t align, uint32_t *entry)
{
	uint64_t off = 0;

	if (align < 4)
		align = 4;
	if (align > 8)
		return -ENOEXEC;
	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_off = off + sizeof(nh), desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		desc_off = round_up(name_off + nh.n_namesz, align);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			return -ENOEXEC;
		if (nh.n_type == PLUGVM_PVH_NOTE_PHYS32_ENTRY && nh.n_namesz == 4 &&
		    !memcmp(p + name_off, PLUGVM_PVH_NOTE_NAME, 4)) {
			uint64_t v = 0;

			if (nh.n_descsz != 4 && nh.n_descsz != 8)
				return -ENOEXEC;
			memcpy(&v, p + desc_off, nh.n_descsz);
			if (v > UINT32_MAX)
				return -ENOEXEC;
			*entry = (uint32_t)v;
			return 1;
		}
		next = round_up(desc_off + nh.n_descsz, align);
		if (next >= size)
			break;
		off = next;
	}
	return 0;
}

size_t loader_elf_kept_len(const uint8_t *img, size_t len)
{
	uint64_t end = sizeof(Elf64_Ehdr);
	Elf64_Ehdr eh;
	int i;

	if (len < sizeof(eh))
		return len;
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), len))
		return len;
	end = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > end
		  ? eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)
		  : end;
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, img + eh.e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE && ph.p_type != PT_LOAD)
			continue;
		if (!in_file(ph.p_offset, ph.p_filesz, len))
			return len;
		if (ph.p_offset + ph.p_filesz > end)
			end = ph.p_offset + ph.p_filesz;
	}
	return (size_t)end;
}

int loader_load_elf(struct guest_mem *m, const uint8_t *img, size_t len, struct loaded_kernel *out,
		    char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	uint64_t lowest = UINT64_MAX, highest = 0;
	bool have_entry = false, entry_loaded = false;
	uint32_t entry = 0;
	Elf64_Phdr load_x[64]; /* executable PT_LOADs; e_phnum <= 64 */
	int i, pass, nr_x = 0;

	if (len < sizeof(eh) || memcmp(img, ELFMAG, SELFMAG))
		return fail(err, errlen, -ENOEXEC, "not an ELF file");
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(err, errlen, -ENOEXEC, "not a 64-bit little-endian ELF");
	if (eh.e_machine != EM_X86_64)
		return fail(err, errlen, -ENOEXEC, "ELF machine %u is not x86-64", eh.e_machine);
	if (eh.e_type != ET_EXEC)
		return fail(err, errlen, -ENOEXEC, "ELF type %u is not an executable", eh.e_type);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 64 ||
	    !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), len))
		return fail(err, errlen, -ENOEXEC, "bad ELF program header table");

	/* Pass 0 validates everything and finds the note; pass 1 copies. Nothing is written
	 * to guest memory unless the whole file is acceptable. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && !entry_loaded)
			return fail(err, errlen, -ENOEXEC,
				    "PVH entry %#x is not inside a loaded segment", entry);
		for (i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			uint8_t *dst;

			memcpy(&ph, img + eh.e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_NOTE && pass == 0) {
				int r;

				if (!in_file(ph.p_offset, ph.p_filesz, len))
					return fail(err, errlen, -ENOEXEC,
						    "PT_NOTE segment %d outside the file", i);
				r = scan_notes(img + ph.p_offset, ph.p_filesz, ph.p_align, &entry);
				if (r < 0)
					return fail(err, errlen, -ENOEXEC,
						    "malformed ELF note in segment %d", i);
				if (r > 0)
					have_entry = true;
				continue;
			}
			if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
				continue;
			if (pass == 0) {
				if (ph.p_filesz > ph.p_memsz)
					return fail(err, errlen, -ENOEXEC,
						    "PT_LOAD segment %d has p_filesz > p_memsz", i);
				if (!in_file(ph.p_offset, ph.p_filesz, len))
					return fail(err, errlen, -ENOEXEC,
						    "PT_LOAD segment %d outside the file", i);
				if (ph.p_paddr < LAYOUT_KERNEL_MIN ||
				    ph.p_paddr + ph.p_memsz < ph.p_paddr ||
				    !mem_gpa_ptr(m, ph.p_paddr, ph.p_memsz))
					return fail(
					    err, errlen, -E2BIG,
					    "kernel segment %d [%#llx-%#llx) does not fit guest "
					    "RAM (%llu MiB, kernel must load at or above 1 MiB)",
					    i, (unsigned long long)ph.p_paddr,
					    (unsigned long long)(ph.p_paddr + ph.p_memsz),
					    (unsigned long long)(m->size >> 20));
				if (ph.p_paddr < lowest)
					lowest = ph.p_paddr;
				if (ph.p_paddr + ph.p_memsz > highest)
					highest = ph.p_paddr + ph.p_memsz;
				if (ph.p_flags & PF_X)
					load_x[nr_x++ % 64] = ph;
				continue;
			}
			dst = mem_gpa_ptr(m, ph.p_paddr, ph.p_memsz);
			memcpy(dst, img + ph.p_offset, ph.p_filesz);
			/* Fresh RAM is zero: its bss is left unbacked (struct guest_mem). */
			if (!m->fresh)
				memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
		}
		if (pass == 0 && !have_entry)
			return fail(err, errlen, -ENOEXEC,
				    "no PVH entry note (Xen ELF note type 18) in the ELF");
		if (pass == 0 && highest == 0)
			return fail(err, errlen, -ENOEXEC, "ELF has no loadable segment");
		for (i = 0; pass == 0 && i < nr_x; i++)
			if (entry >= load_x[i].p_paddr &&
			    entry - load_x[i].p_paddr < load_x[i].p_filesz)
				entry_loaded = true;
	}
	m->fresh = false;
	out->entry = entry;
	out->lowest = lowest;
	out->highest = highest;
	return 0;
}

int loader_read_file(const char *path, uint64_t max, uint8_t **img, size_t *len, char *err,
		     size_t errlen)
{
	struct stat st;
	uint8_t *buf;
	size_t done = 0;
	int fd, ret;

	*img = NULL;
	*len = 0;

	/* O_NONBLOCK: a FIFO or a device is refused below, not waited on in open(). */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fail(err, errlen, -errno, "kernel %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = fail(err, errlen, -errno, "kernel %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = fail(err, errlen, -EINVAL, "kernel %s: not a regular file", path);
		goto out_close;
	}
	if ((uint64_t)st.st_size > LOADER_MAX_FILE_BYTES || (uint64_t)st.st_size > max) {
		ret = fail(err, errlen, -E2BIG,
			   "kernel %s: %lld bytes is too large for %llu MiB of "
			   "guest RAM",
			   path, (long long)st.st_size, (unsigned long long)(max >> 20));
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = fail(err, errlen, -ENOMEM, "kernel %s: out of memory", path);
		goto out_close;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = fail(err, errlen, n < 0 ? -errno : -EIO, "kernel %s: read failed: %s",
				   path, n < 0 ? strerror(errno) : "short read");
			goto out_free;
		}
		done += (size_t)n;
	}
	*img = buf;
	*len = done;
	close(fd);
	return 0;
out_free:
	free(buf);
out_close:
	close(fd);
	return ret;
}

int loader_load_image(struct guest_mem *m, const char *path, const uint8_t *img, size_t len,
		      struct loaded_kernel *out, char *err, size_t errlen)
{
	int ret = loader_load_elf(m, img, len, out, err, errlen);

	if (ret && err && errlen) {
		char reason[256];

		snprintf(reason, sizeof(reason), "%s", err);
		snprintf(err, errlen, "kernel %s: %s", path, reason);
	}
	return ret;
}
