// SPDX-License-Identifier: MIT
/* `--dump-acpi DIR`: plugvm's ACPI tables as files for ACPICA's iasl (see acpi_dump.h). */
#include "acpi_dump.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../log.h"
#include "acpi_tables.h"

static int write_file(const char *dir, const char *name, const void *p, uint64_t len)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		log_error("--dump-acpi: %s: %s", path, strerror(e));
		return -e;
	}
	n = write(fd, p, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? errno : EIO;

		log_error("--dump-acpi: %s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	return close(fd) ? -errno : 0;
}

/* The table at guest address `gpa` inside buf, or NULL. */
static const struct plugvm_acpi_header *table_at(const uint8_t *buf, uint64_t size, gpa_t base,
						 uint64_t gpa)
{
	const struct plugvm_acpi_header *h;

	if (gpa < base || gpa - base > size || size - (gpa - base) < sizeof(*h))
		return NULL;
	h = (const void *)(buf + (gpa - base));
	if (h->length < sizeof(*h) || h->length > size - (gpa - base))
		return NULL;
	return h;
}

static int dump_table(const char *dir, const struct plugvm_acpi_header *h)
{
	char name[5];
	int i;

	for (i = 0; i < 4; i++)
		name[i] = (char)tolower((unsigned char)h->signature[i]);
	name[4] = '\0';
	return write_file(dir, name, h, h->length);
}

int acpi_dump(const uint8_t *buf, uint64_t size, gpa_t base, const char *dir)
{
	const struct plugvm_acpi_rsdp *rsdp = (const void *)buf;
	const struct plugvm_acpi_header *root[2], *h;
	unsigned r;
	int ret;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		int e = errno;

		log_error("--dump-acpi: %s: %s", dir, strerror(e));
		return -e;
	}
	if (size < sizeof(*rsdp))
		return -EINVAL;
	ret = write_file(dir, "rsdp", rsdp, rsdp->revision >= 2 ? rsdp->length : 20);
	if (ret)
		return ret;
	root[0] = table_at(buf, size, base, rsdp->rsdt_address);
	root[1] = rsdp->revision >= 2 ? table_at(buf, size, base, rsdp->xsdt_address) : NULL;
	for (r = 0; r < 2; r++) {
		unsigned esize = r ? 8 : 4, i, n;

		if (!root[r])
			continue;
		if ((ret = dump_table(dir, root[r])))
			return ret;
		n = (root[r]->length - sizeof(*root[r])) / esize;
		/* Both roots list the same tables: write them once, from the XSDT (or RSDT). */
		if (r == 0 && root[1])
			continue;
		for (i = 0; i < n; i++) {
			uint64_t pa = 0;

			memcpy(&pa, (const uint8_t *)(root[r] + 1) + i * esize, esize);
			h = table_at(buf, size, base, pa);
			if (!h)
				continue;
			if ((ret = dump_table(dir, h)))
				return ret;
			if (!memcmp(h->signature, PLUGVM_ACPI_SIG_FADT, 4)) {
				const struct plugvm_acpi_fadt *f = (const void *)h;
				uint64_t dsdt = f->dsdt;

				if (h->length >= offsetof(struct plugvm_acpi_fadt, x_dsdt) + 8 &&
				    f->x_dsdt)
					dsdt = f->x_dsdt;
				h = table_at(buf, size, base, dsdt);
				if (h && (ret = dump_table(dir, h)))
					return ret;
			}
		}
	}
	return 0;
}
