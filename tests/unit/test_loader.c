// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/loader.c over a few MiB of real guest memory (vmm/mem.c): ELF64
 * images built here by hand from <elf.h>, the PVH note in its 4/8-byte and 4/8-aligned
 * forms, every refusal (with its -errno and message, and no byte written to the guest),
 * and the file handling of loader_read_file() with loader_load_image().
 */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <string.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pvh.h"
#include "tests/unit/vmm_shim/elf_header.h"
#include "vmm/loader.h"
#include "vmm/mem.h"
#include "vmm/x86/layout.h"

#define GUEST_MEM   (4ull << 20)
#define FILL	    0xa5
#define TEXT_PA	    0x100000ull
#define TEXT_SIZE   0x200u
#define DATA_PA	    0x101000ull
#define DATA_FILESZ 0x80u
#define DATA_MEMSZ  0x3000u
#define ENTRY	    (TEXT_PA + 0x10)
#define ERRLEN	    256

/* Program header slots of the standard image. */
enum { PH_TEXT, PH_DATA, PH_NOTE, NR_PH };

struct image {
	uint8_t buf[0x2000];
	size_t len;
};

static struct guest_mem mem;

static Elf64_Ehdr *ehdr(struct image *im)
{
	return (Elf64_Ehdr *)im->buf;
}

static Elf64_Phdr *phdr(struct image *im, int i)
{
	return (Elf64_Phdr *)(im->buf + ehdr(im)->e_phoff) + i;
}

/*
 * Append a note with a 4-byte name laid out for `align` as binutils does (glibc's
 * ELF_NOTE_DESC_OFFSET: the descriptor at header + name rounded up, the next note at the
 * descriptor's end rounded up); the descriptor holds `entry`. Returns its size.
 */
static size_t put_note(uint8_t *p, uint32_t type, const char *name, uint64_t entry, uint32_t descsz,
		       uint64_t align)
{
	Elf64_Nhdr nh = { .n_namesz = 4, .n_descsz = descsz, .n_type = type };
	size_t desc_off = (sizeof(nh) + 4 + align - 1) & ~(align - 1);
	size_t end = (desc_off + descsz + align - 1) & ~(align - 1);

	memset(p, 0, end);
	memcpy(p, &nh, sizeof(nh));
	memcpy(p + sizeof(nh), name, 4);
	memcpy(p + desc_off, &entry, descsz < 8 ? descsz : 8);
	return end;
}

/* Put a "GNU" note (`type`, `descsz` bytes holding `desc`) before the image's PVH note. */
static size_t prepend_note(struct image *im, uint32_t type, uint64_t desc, uint32_t descsz,
			   uint64_t align)
{
	uint8_t *note = im->buf + phdr(im, PH_NOTE)->p_offset, pvh[64];
	size_t pvh_len = phdr(im, PH_NOTE)->p_filesz, len;

	memcpy(pvh, note, pvh_len);
	len = put_note(note, type, "GNU", desc, descsz, align);
	memcpy(note + len, pvh, pvh_len);
	phdr(im, PH_NOTE)->p_filesz = len + pvh_len;
	assert_true(phdr(im, PH_NOTE)->p_offset + len + pvh_len <= 0x400);
	return len;
}

/* A PT_LOAD segment as ld writes one: page-aligned, loaded where it is linked. */
static void load_segment(Elf64_Phdr *ph, uint32_t flags, uint64_t offset, uint64_t pa,
			 uint64_t filesz, uint64_t memsz)
{
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD,
			    .p_flags = flags,
			    .p_offset = offset,
			    .p_vaddr = pa,
			    .p_paddr = pa,
			    .p_filesz = filesz,
			    .p_memsz = memsz,
			    .p_align = 0x1000 };
}

/*
 * The standard good image: a text PT_LOAD (R+X) at 1 MiB holding the entry, a data
 * PT_LOAD with bss, and a PT_NOTE placed before them (as ld does), whose descriptor is
 * `descsz` bytes and whose p_align is `note_align`.
 */
static void build(struct image *im, uint32_t descsz, uint64_t note_align)
{
	Elf64_Ehdr *eh = ehdr(im);
	size_t off, i, note_off, note_len;

	memset(im, 0, sizeof(*im));
	elf_header_init(eh, 0x100000, NR_PH);
	off = sizeof(*eh) + NR_PH * sizeof(Elf64_Phdr);

	note_off = (off + 7) & ~7ul;
	note_len = put_note(im->buf + note_off, PLUGVM_PVH_NOTE_PHYS32_ENTRY, PLUGVM_PVH_NOTE_NAME,
			    ENTRY, descsz, note_align);
	*phdr(im, PH_NOTE) = (Elf64_Phdr){ .p_type = PT_NOTE,
					   .p_flags = PF_R,
					   .p_offset = note_off,
					   .p_filesz = note_len,
					   .p_memsz = note_len,
					   .p_align = note_align };

	load_segment(phdr(im, PH_TEXT), PF_R | PF_X, 0x400, TEXT_PA, TEXT_SIZE, TEXT_SIZE);
	for (i = 0; i < TEXT_SIZE; i++)
		im->buf[0x400 + i] = (uint8_t)(i * 7 + 1);

	load_segment(phdr(im, PH_DATA), PF_R | PF_W, 0x800, DATA_PA, DATA_FILESZ, DATA_MEMSZ);
	for (i = 0; i < DATA_FILESZ; i++)
		im->buf[0x800 + i] = (uint8_t)(0xff - i);
	im->len = 0x800 + DATA_FILESZ;
}

static uint8_t *gpa(gpa_t a, uint64_t len)
{
	uint8_t *p = mem_gpa_ptr(&mem, a, len);

	assert_non_null(p);
	return p;
}

static void fill_guest(void)
{
	memset(gpa(0, GUEST_MEM), FILL, GUEST_MEM);
	mem.fresh = false; /* dirty RAM, as the guest leaves it */
}

/* True if guest RAM still holds only the fill pattern. */
static bool guest_untouched(void)
{
	const uint8_t *p = gpa(0, GUEST_MEM);
	size_t i;

	for (i = 0; i < GUEST_MEM; i++)
		if (p[i] != FILL)
			return false;
	return true;
}

/* Load and check that the standard image landed where it should. */
static void load_and_check(struct image *im)
{
	struct loaded_kernel k = { 0 };
	char err[ERRLEN] = "";
	const uint8_t *text, *data;
	size_t i;

	fill_guest();
	if (loader_load_elf(&mem, im->buf, im->len, &k, err, sizeof(err)))
		fail_msg("load failed: %s", err);
	assert_int_equal(k.entry, ENTRY);
	assert_int_equal(k.lowest, TEXT_PA);
	assert_int_equal(k.highest, DATA_PA + DATA_MEMSZ);

	text = gpa(TEXT_PA, TEXT_SIZE);
	assert_memory_equal(text, im->buf + 0x400, TEXT_SIZE);
	data = gpa(DATA_PA, DATA_MEMSZ);
	assert_memory_equal(data, im->buf + 0x800, DATA_FILESZ);
	for (i = DATA_FILESZ; i < DATA_MEMSZ; i++)
		if (data[i] != 0)
			fail_msg("bss byte %#zx not zeroed", i);
	/* Around the segments nothing moved. */
	assert_int_equal(*gpa(TEXT_PA - 1, 1), FILL);
	assert_int_equal(*gpa(TEXT_PA + TEXT_SIZE, 1), FILL);
	assert_int_equal(*gpa(DATA_PA + DATA_MEMSZ, 1), FILL);
	assert_int_equal(*gpa(0, 1), FILL);
}

/* Expect a refusal with `ret` and `needle` in the message, and guest memory untouched. */
static void load_fails(struct image *im, int ret, const char *needle)
{
	struct loaded_kernel k = { 0 };
	char err[ERRLEN] = "";

	fill_guest();
	assert_int_equal(loader_load_elf(&mem, im->buf, im->len, &k, err, sizeof(err)), ret);
	assert_contains(err, needle);
	if (!guest_untouched())
		fail_msg("guest memory written by a refused load (%s)", err);
}

static int setup(void **state)
{
	(void)state;
	return mem_init(&mem, GUEST_MEM);
}

static int teardown(void **state)
{
	(void)state;
	mem_destroy(&mem);
	return 0;
}

static void test_good_images(void **state)
{
	static const struct {
		uint32_t descsz;
		uint64_t align;
	} forms[] = { { 4, 4 }, { 8, 4 }, { 4, 8 }, { 8, 8 }, { 4, 0 }, { 8, 1 } };
	struct image im;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		build(&im, forms[i].descsz, forms[i].align < 4 ? 4 : forms[i].align);
		/* p_align 0 and 1 mean "no alignment": padding is still 4 bytes. */
		phdr(&im, PH_NOTE)->p_align = forms[i].align;
		load_and_check(&im);
	}
}

/* The prefix loader_elf_kept_len() names loads exactly as the whole file did. */
static void test_kept_prefix_loads_the_same(void **state)
{
	struct image im;
	size_t kept;

	(void)state;
	build(&im, 4, 4);
	/* What ld puts after the segments: section headers, symbols. */
	memset(im.buf + im.len, 0xee, 0x100);
	im.len += 0x100;
	ehdr(&im)->e_shoff = im.len - 0x80;
	kept = loader_elf_kept_len(im.buf, im.len);
	assert_int_equal(kept, 0x800 + DATA_FILESZ);
	im.len = kept;
	load_and_check(&im);
	/* A malformed image is kept whole: its load fails anyway, with the reason. */
	ehdr(&im)->e_phoff = im.len;
	assert_int_equal(loader_elf_kept_len(im.buf, im.len), im.len);
	assert_int_equal(loader_elf_kept_len(im.buf, 10), 10);
}

/* The "Anonymous:" kB of the mapping holding p (/proc/self/smaps): pages written, not
 * those that only read as zero (the shared zero page). */
static long anon_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * A first load into fresh guest RAM leaves the bss pages it need not write unbacked (they
 * read as zero); a reload over dirty ones zeroes them (load_and_check()).
 */
static void test_bss_of_fresh_ram_stays_unbacked(void **state)
{
	struct loaded_kernel k = { 0 };
	struct guest_mem fresh;
	char err[ERRLEN] = "";
	struct image im;
	long before;

	(void)state;
	build(&im, 4, 4);
	assert_int_equal(mem_init(&fresh, GUEST_MEM), 0);
	before = anon_kb(mem_gpa_ptr(&fresh, 0, 1));
	assert_int_equal(loader_load_elf(&fresh, im.buf, im.len, &k, err, sizeof(err)), 0);
	/* The text page and the data page; not the two pages of bss. (The mapping may have
	 * merged with another: the difference counts.) */
	assert_int_equal(anon_kb(mem_gpa_ptr(&fresh, 0, 1)) - before, 8);
	assert_int_equal(*(uint8_t *)mem_gpa_ptr(&fresh, DATA_PA + 0x2fff, 1), 0);
	memset(mem_gpa_ptr(&fresh, DATA_PA + 0x2000, 0x1000), FILL, 0x1000);
	assert_int_equal(loader_load_elf(&fresh, im.buf, im.len, &k, err, sizeof(err)), 0);
	assert_int_equal(*(uint8_t *)mem_gpa_ptr(&fresh, DATA_PA + 0x2800, 1), 0);
	mem_destroy(&fresh);
}

static void test_good_variants(void **state)
{
	struct image im;
	struct loaded_kernel k;
	char err[ERRLEN] = "";

	(void)state;
	/* A note before the PVH one (a GNU build ID) is skipped. */
	build(&im, 8, 4);
	prepend_note(&im, 3 /* NT_GNU_BUILD_ID */, 0x1122334455667788ull, 8, 4);
	load_and_check(&im);

	/*
	 * An 8-aligned .note.gnu.property (every static binary has one) is skipped, before the PVH note or without one ("no PVH entry note", not "malformed").
	 */
	build(&im, 8, 8);
	assert_int_equal(prepend_note(&im, 5 /* NT_GNU_PROPERTY_TYPE_0 */, 0xc0000002ull, 16, 8),
			 32);
	load_and_check(&im);
	phdr(&im, PH_NOTE)->p_filesz = 32;
	load_fails(&im, -ENOEXEC, "no PVH entry note (Xen ELF note type 18) in the ELF");

	/* A note of another vendor with type 18 is not the PVH note. */
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_type = PT_NULL;
	im.buf[0x300] = 0;
	{
		size_t a = put_note(im.buf + 0x300, 18, "Xem", 0x100000, 4, 4);
		size_t b = put_note(im.buf + 0x300 + a, 18, "Xen", ENTRY, 4, 4);

		*phdr(&im, PH_NOTE) = (Elf64_Phdr){
			.p_type = PT_NOTE, .p_offset = 0x300, .p_filesz = a + b, .p_align = 4
		};
	}
	load_and_check(&im);

	/* The program header table need not be aligned (the loader copies it). */
	build(&im, 4, 4);
	memmove(im.buf + 0x201, im.buf + sizeof(Elf64_Ehdr), NR_PH * sizeof(Elf64_Phdr));
	ehdr(&im)->e_phoff = 0x201;
	load_and_check(&im);

	/* PT_LOADs of size 0 and other segment types are ignored. */
	build(&im, 4, 4);
	phdr(&im, PH_DATA)->p_memsz = 0;
	phdr(&im, PH_DATA)->p_filesz = 0;
	phdr(&im, PH_DATA)->p_paddr = 0; /* would be refused if it counted */
	fill_guest();
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, err, sizeof(err)), 0);
	assert_int_equal(k.highest, TEXT_PA + TEXT_SIZE);
	phdr(&im, PH_DATA)->p_type = PT_GNU_STACK;
	phdr(&im, PH_DATA)->p_memsz = 0x100000000ull;
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, err, sizeof(err)), 0);

	/* A segment ending exactly at the end of RAM fits. */
	build(&im, 4, 4);
	phdr(&im, PH_DATA)->p_paddr = GUEST_MEM - DATA_MEMSZ;
	fill_guest();
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, err, sizeof(err)), 0);
	assert_int_equal(k.highest, GUEST_MEM);
	assert_int_equal(*gpa(GUEST_MEM - 1, 1), 0);

	/* The entry may be the last byte of the executable segment's file image. */
	build(&im, 8, 8);
	memcpy(im.buf + phdr(&im, PH_NOTE)->p_offset + sizeof(Elf64_Nhdr) + 4, /* 16: aligned */
	       &(uint64_t){ TEXT_PA + TEXT_SIZE - 1 }, 8);
	fill_guest();
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, err, sizeof(err)), 0);
	assert_int_equal(k.entry, TEXT_PA + TEXT_SIZE - 1);

	/* A NULL or empty error buffer is allowed. */
	build(&im, 4, 4);
	ehdr(&im)->e_machine = EM_386;
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, NULL, 0), -ENOEXEC);
	assert_int_equal(loader_load_elf(&mem, im.buf, im.len, &k, err, 0), -ENOEXEC);
}

static void test_bad_headers(void **state)
{
	struct image im;

	(void)state;
	build(&im, 4, 4);
	im.buf[0] = 0x7e;
	load_fails(&im, -ENOEXEC, "not an ELF file");
	build(&im, 4, 4);
	im.len = sizeof(Elf64_Ehdr) - 1;
	load_fails(&im, -ENOEXEC, "not an ELF file");
	build(&im, 4, 4);
	im.len = 0;
	load_fails(&im, -ENOEXEC, "not an ELF file");

	build(&im, 4, 4);
	ehdr(&im)->e_ident[EI_CLASS] = ELFCLASS32;
	load_fails(&im, -ENOEXEC, "not a 64-bit little-endian ELF");
	build(&im, 4, 4);
	ehdr(&im)->e_ident[EI_DATA] = ELFDATA2MSB;
	load_fails(&im, -ENOEXEC, "not a 64-bit little-endian ELF");

	build(&im, 4, 4);
	ehdr(&im)->e_machine = EM_386;
	load_fails(&im, -ENOEXEC, "ELF machine 3 is not x86-64");
	build(&im, 4, 4);
	ehdr(&im)->e_machine = EM_AARCH64;
	load_fails(&im, -ENOEXEC, "ELF machine 183 is not x86-64");

	build(&im, 4, 4);
	ehdr(&im)->e_type = ET_DYN;
	load_fails(&im, -ENOEXEC, "ELF type 3 is not an executable");
	build(&im, 4, 4);
	ehdr(&im)->e_type = ET_REL;
	load_fails(&im, -ENOEXEC, "ELF type 1 is not an executable");
}

static void test_bad_phdr_table(void **state)
{
	static const char msg[] = "bad ELF program header table";
	struct image im;

	(void)state;
	build(&im, 4, 4);
	ehdr(&im)->e_phentsize = sizeof(Elf64_Phdr) - 1;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phentsize = sizeof(Elf32_Phdr);
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phnum = 0;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phnum = 65;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phnum = 0xffff; /* PN_XNUM */
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phoff = im.len;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phoff = im.len - NR_PH * sizeof(Elf64_Phdr) + 1;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	ehdr(&im)->e_phoff = UINT64_MAX - 8;
	load_fails(&im, -ENOEXEC, msg);
	build(&im, 4, 4);
	im.len = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
	load_fails(&im, -ENOEXEC, msg);
}

static void test_bad_segments(void **state)
{
	/* The good image with one 64-bit field of one segment changed. */
	static const struct {
		int ph;
		size_t field; /* offsetof(Elf64_Phdr, ...) */
		uint64_t value;
		int ret;
		const char *msg;
	} bad[] = {
		/* Outside the file: start, end, and an offset that wraps. */
		{ PH_DATA, offsetof(Elf64_Phdr, p_offset), 0x800 + DATA_FILESZ + 1, -ENOEXEC,
		  "PT_LOAD segment 1 outside the file" },
		{ PH_DATA, offsetof(Elf64_Phdr, p_filesz), DATA_FILESZ + 1, -ENOEXEC,
		  "PT_LOAD segment 1 outside the file" },
		{ PH_TEXT, offsetof(Elf64_Phdr, p_offset), UINT64_MAX - 0x10, -ENOEXEC,
		  "PT_LOAD segment 0 outside the file" },
		/* More file bytes than memory bytes. */
		{ PH_DATA, offsetof(Elf64_Phdr, p_memsz), DATA_FILESZ - 1, -ENOEXEC,
		  "PT_LOAD segment 1 has p_filesz > p_memsz" },
		/* Below 1 MiB, even by one byte. */
		{ PH_TEXT, offsetof(Elf64_Phdr, p_paddr), 0x8000, -E2BIG,
		  "kernel segment 0 [0x8000-0x8200) does not fit guest RAM (4 MiB, kernel must "
		  "load at or above 1 MiB)" },
		{ PH_TEXT, offsetof(Elf64_Phdr, p_paddr), LAYOUT_KERNEL_MIN - 1, -E2BIG,
		  "kernel segment 0 [0xfffff-" },
		/* Beyond guest RAM: starting past it, and running past it by one byte. */
		{ PH_DATA, offsetof(Elf64_Phdr, p_paddr), GUEST_MEM, -E2BIG,
		  "kernel segment 1 [0x400000-0x403000) does not fit guest RAM" },
		{ PH_DATA, offsetof(Elf64_Phdr, p_paddr), GUEST_MEM - DATA_MEMSZ + 1, -E2BIG,
		  "kernel segment 1 [0x3fd001-0x400001) does not fit" },
		{ PH_DATA, offsetof(Elf64_Phdr, p_memsz), 0x1000000000ull, -E2BIG,
		  "kernel segment 1 [0x101000-0x1000101000) does not fit" },
		{ PH_DATA, offsetof(Elf64_Phdr, p_paddr), LAYOUT_HIGH_RAM_BASE, -E2BIG,
		  "does not fit guest RAM" },
		/* paddr + memsz wraps around 2^64. */
		{ PH_DATA, offsetof(Elf64_Phdr, p_paddr), UINT64_MAX - 0xfff, -E2BIG,
		  "kernel segment 1 [0xfffffffffffff000-" },
		{ PH_DATA, offsetof(Elf64_Phdr, p_memsz), UINT64_MAX - DATA_PA + 2, -E2BIG,
		  "kernel segment 1 [0x101000-0x1)" },
	};
	struct image im;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build(&im, 4, 4);
		memcpy((uint8_t *)phdr(&im, bad[i].ph) + bad[i].field, &bad[i].value,
		       sizeof(uint64_t));
		load_fails(&im, bad[i].ret, bad[i].msg);
	}
	/* A size that wraps the file offset. */
	build(&im, 4, 4);
	phdr(&im, PH_TEXT)->p_filesz = UINT64_MAX;
	phdr(&im, PH_TEXT)->p_memsz = UINT64_MAX;
	load_fails(&im, -ENOEXEC, "PT_LOAD segment 0 outside the file");
	/* No loadable segment at all. */
	build(&im, 4, 4);
	phdr(&im, PH_TEXT)->p_type = PT_NULL;
	phdr(&im, PH_DATA)->p_type = PT_NULL;
	load_fails(&im, -ENOEXEC, "ELF has no loadable segment");
}

static void test_bad_notes(void **state)
{
	static const char nonote[] = "no PVH entry note (Xen ELF note type 18) in the ELF";
	struct image im;
	Elf64_Nhdr *nh;
	uint8_t *desc;

	(void)state;
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_type = PT_NULL;
	load_fails(&im, -ENOEXEC, nonote);
	build(&im, 4, 4);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_type = 17;
	load_fails(&im, -ENOEXEC, nonote);
	build(&im, 4, 4);
	im.buf[phdr(&im, PH_NOTE)->p_offset + sizeof(*nh) + 2] = 'm';
	load_fails(&im, -ENOEXEC, nonote);
	build(&im, 4, 4);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_namesz = 3; /* "Xen" without its NUL is another name */
	load_fails(&im, -ENOEXEC, nonote);
	/* A note segment shorter than one note header holds no note. */
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_filesz = sizeof(*nh) - 1;
	load_fails(&im, -ENOEXEC, nonote);

	/* Malformed: name or descriptor past the segment, odd descriptor sizes, big values. */
	build(&im, 4, 4);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_namesz = 0xfffffff0u;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 4, 4);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_descsz = 0xffffffffu;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_filesz -= 1;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 4, 4);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_descsz = 2;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 8, 8);
	nh = (Elf64_Nhdr *)(im.buf + phdr(&im, PH_NOTE)->p_offset);
	nh->n_descsz = 6;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 8, 4);
	desc = im.buf + phdr(&im, PH_NOTE)->p_offset + sizeof(*nh) + 4;
	memcpy(desc, &(uint64_t){ 0x100000000ull }, 8);
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_align = 16;
	load_fails(&im, -ENOEXEC, "malformed ELF note in segment 2");

	/* The note segment itself outside the file. */
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_offset = im.len - 4;
	load_fails(&im, -ENOEXEC, "PT_NOTE segment 2 outside the file");
	build(&im, 4, 4);
	phdr(&im, PH_NOTE)->p_filesz = UINT64_MAX;
	load_fails(&im, -ENOEXEC, "PT_NOTE segment 2 outside the file");
}

/* Rewrite the standard image's 4-byte PVH entry. */
static void set_entry(struct image *im, uint32_t entry)
{
	memcpy(im->buf + phdr(im, PH_NOTE)->p_offset + sizeof(Elf64_Nhdr) + 4, &entry, 4);
}

static void test_bad_entry(void **state)
{
	struct image im;

	(void)state;
	/* In the data segment (not executable), in text's bss, before and after text. */
	build(&im, 4, 4);
	set_entry(&im, DATA_PA + 4);
	load_fails(&im, -ENOEXEC, "PVH entry 0x101004 is not inside a loaded segment");
	build(&im, 4, 4);
	phdr(&im, PH_TEXT)->p_memsz = 0x800;
	set_entry(&im, TEXT_PA + TEXT_SIZE);
	load_fails(&im, -ENOEXEC, "PVH entry 0x100200 is not inside a loaded segment");
	build(&im, 4, 4);
	set_entry(&im, TEXT_PA - 1);
	load_fails(&im, -ENOEXEC, "PVH entry 0xfffff is not inside");
	build(&im, 4, 4);
	set_entry(&im, 0);
	load_fails(&im, -ENOEXEC, "PVH entry 0 is not inside");
	/* The text segment not executable. */
	build(&im, 4, 4);
	phdr(&im, PH_TEXT)->p_flags = PF_R;
	load_fails(&im, -ENOEXEC, "PVH entry 0x100010 is not inside a loaded segment");
}

/* ---- loader_read_file + loader_load_image, as machine.c loads a kernel file -------------- */

static int load_file(struct guest_mem *m, const char *path, struct loaded_kernel *k, char *err,
		     size_t errlen)
{
	uint8_t *img;
	size_t len;
	int ret = loader_read_file(path, m->size, &img, &len, err, errlen);

	if (ret)
		return ret;
	ret = loader_load_image(m, path, img, len, k, err, errlen);
	free(img);
	return ret;
}

static char tmpdir[64];

static void tmp_path(char *out, size_t len, const char *name)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/plugvm-loader-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
		assert_int_equal(chmod(tmpdir, 0755), 0);
	}
	snprintf(out, len, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const void *p, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_file_good(void **state)
{
	struct loaded_kernel k = { 0 };
	char path[128], err[ERRLEN] = "";
	struct image im;

	(void)state;
	build(&im, 8, 8);
	tmp_path(path, sizeof(path), "good.elf");
	write_file(path, im.buf, im.len, 0644);
	fill_guest();
	if (load_file(&mem, path, &k, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(k.entry, ENTRY);
	assert_memory_equal(gpa(TEXT_PA, TEXT_SIZE), im.buf + 0x400, TEXT_SIZE);
	unlink(path);
}

static void test_file_errors(void **state)
{
	struct loaded_kernel k = { 0 };
	char path[128], err[ERRLEN], want[256];
	struct image im;
	int fd;

	(void)state;
	fill_guest();
	tmp_path(path, sizeof(path), "missing.elf");
	assert_int_equal(load_file(&mem, path, &k, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "kernel %s: No such file or directory", path);
	assert_string_equal(err, want);

	assert_int_equal(load_file(&mem, tmpdir, &k, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "kernel %s: not a regular file", tmpdir);
	assert_string_equal(err, want);

	assert_int_equal(load_file(&mem, "/dev/null", &k, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "kernel /dev/null: not a regular file");

	/* Larger than guest RAM (sparse, so cheap). */
	tmp_path(path, sizeof(path), "huge.elf");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)GUEST_MEM + 1), 0);
	close(fd);
	assert_int_equal(load_file(&mem, path, &k, err, sizeof(err)), -E2BIG);
	snprintf(want, sizeof(want), "kernel %s: 4194305 bytes is too large for 4 MiB of guest RAM",
		 path);
	assert_string_equal(err, want);
	unlink(path);

	/* Empty, and not an ELF: the loader's reason, prefixed with the file name. */
	tmp_path(path, sizeof(path), "empty.elf");
	write_file(path, "", 0, 0644);
	assert_int_equal(load_file(&mem, path, &k, err, sizeof(err)), -ENOEXEC);
	snprintf(want, sizeof(want), "kernel %s: not an ELF file", path);
	assert_string_equal(err, want);
	build(&im, 4, 4);
	ehdr(&im)->e_type = ET_DYN;
	write_file(path, im.buf, im.len, 0644);
	assert_int_equal(load_file(&mem, path, &k, err, sizeof(err)), -ENOEXEC);
	snprintf(want, sizeof(want), "kernel %s: ELF type 3 is not an executable", path);
	assert_string_equal(err, want);
	unlink(path);
	assert_true(guest_untouched());
}

struct unreadable_args {
	const char *path;
};

/* Child: drop root if we have it (root reads mode-000 files), then try the load. */
static void load_unreadable(void *arg)
{
	const struct unreadable_args *a = arg;
	struct loaded_kernel k;
	char err[ERRLEN] = "";
	int ret;

	if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
		_exit(3);
	ret = load_file(&mem, a->path, &k, err, sizeof(err));
	printf("%s\n", err);
	fflush(stdout);
	_exit(ret == -EACCES ? 0 : 1);
}

static void test_file_unreadable(void **state)
{
	struct unreadable_args a;
	char path[128], out[512], want[256];
	struct image im;
	int st;

	(void)state;
	build(&im, 4, 4);
	tmp_path(path, sizeof(path), "unreadable.elf");
	write_file(path, im.buf, im.len, 0);
	a.path = path;
	st = unit_run_child(load_unreadable, &a, out, sizeof(out));
	unlink(path);
	if (st == 3)
		skip(); /* cannot drop privileges here; reported as skipped */
	assert_int_equal(st, 0);
	snprintf(want, sizeof(want), "kernel %s: Permission denied", path);
	assert_contains(out, want);
}

static int teardown_files(void **state)
{
	(void)state;
	if (tmpdir[0])
		rmdir(tmpdir);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_images),
		cmocka_unit_test(test_good_variants),
		cmocka_unit_test(test_kept_prefix_loads_the_same),
		cmocka_unit_test(test_bss_of_fresh_ram_stays_unbacked),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_phdr_table),
		cmocka_unit_test(test_bad_segments),
		cmocka_unit_test(test_bad_notes),
		cmocka_unit_test(test_bad_entry),
		cmocka_unit_test(test_file_good),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_file_unreadable),
	};

	return cmocka_run_group_tests(tests, setup, teardown_files);
}
