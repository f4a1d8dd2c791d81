// SPDX-License-Identifier: MIT
/*
 * ACPI table builder (QEMU `pc` or `q35` register layout, from the config's acpi_layout).
 * Pure: writes into a caller's buffer.
 */
#include "acpi.h"

#include <string.h>

#include "acpi_tables.h"
#include "plugvm_abi.h"

#define ACPI_OEM_ID    "PLUGVM"
#define ACPI_OEM_TABLE "PLUGVM  "
#define ACPI_CREATOR   0x4d564750u /* "PGVM" */

struct builder {
	uint8_t *buf;
	uint64_t size;
	uint64_t used;
	gpa_t base;
	int overflow;
};

uint8_t acpi_checksum(const void *p, uint64_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *b++);
	return sum;
}

/* Reserve `len` zeroed bytes at 16-byte alignment; returns the offset into buf. */
static uint64_t reserve(struct builder *b, uint64_t len)
{
	uint64_t off = (b->used + 15) & ~15ull;

	if (b->overflow || off > b->size || len > b->size - off) {
		b->overflow = 1;
		return 0;
	}
	memset(b->buf + off, 0, len);
	b->used = off + len;
	return off;
}

static void header(struct plugvm_acpi_header *h, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(h->signature, sig, 4);
	h->length = len;
	h->revision = rev;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE, 8);
	h->oem_revision = 1;
	h->creator_id = ACPI_CREATOR;
	h->creator_revision = 1;
}

static void finish(struct plugvm_acpi_header *h)
{
	h->checksum = 0;
	h->checksum = (uint8_t)-acpi_checksum(h, h->length);
}

static struct plugvm_acpi_gas io_gas(uint8_t bits, uint16_t port)
{
	struct plugvm_acpi_gas g = { .space_id = 1, .bit_width = bits, .address = port };

	return g;
}

/* AML PkgLength encoding of a package whose contents (after the PkgLength) are `len`. */
static unsigned pkglen_encode(uint8_t *out, uint32_t len)
{
	uint32_t total;

	if (len + 1 < 64) {
		out[0] = (uint8_t)(len + 1);
		return 1;
	}
	total = len + 2;
	if (total < 4096) {
		out[0] = (uint8_t)(0x40 | (total & 0xf));
		out[1] = (uint8_t)(total >> 4);
		return 2;
	}
	total = len + 3;
	out[0] = (uint8_t)(0x80 | (total & 0xf));
	out[1] = (uint8_t)(total >> 4);
	out[2] = (uint8_t)(total >> 12);
	return 3;
}

/* Emit `op` (1 or 2 bytes), a PkgLength and `body`. Returns bytes written. */
static unsigned aml_pkg(uint8_t *out, const uint8_t *op, unsigned oplen, const uint8_t *body,
			unsigned len)
{
	unsigned n = oplen;

	memcpy(out, op, oplen);
	n += pkglen_encode(out + n, len);
	memcpy(out + n, body, len);
	return n + len;
}

/*
 * The DSDT's AML (`cpuhp` is 0xAF00 on pc, 0x0CD8 on q35, as QEMU's):
 *   Name (_S5, Package () { 0, 0, 0, 0 })
 *   Scope (_SB) {
 *     Device (PRES) {
 *       Name (_HID, EisaId ("PNP0A06"))
 *       OperationRegion (PRST, SystemIO, cpuhp, 0x0C)
 *     }
 *   }
 */
static unsigned build_aml(uint8_t *out, uint16_t cpuhp)
{
	static const uint8_t s5[] = { 0x08, '_',  'S',	'5',  '_',  0x12,
				      0x06, 0x04, 0x00, 0x00, 0x00, 0x00 };
	const uint8_t dev_body[] = {
		'P',
		'R',
		'E',
		'S',
		0x08,
		'_',
		'H',
		'I',
		'D',
		0x0c,
		0x41,
		0xd0,
		0x0a,
		0x06,
		0x5b,
		0x80,
		'P',
		'R',
		'S',
		'T',
		0x01,
		0x0b,
		(uint8_t)(cpuhp & 0xff),
		(uint8_t)(cpuhp >> 8),
		0x0a,
		PLUGVM_PORT_CPUHP_LEN,
	};
	static const uint8_t device_op[] = { 0x5b, 0x82 }, scope_op[] = { 0x10 };
	uint8_t dev[64], scope[80];
	unsigned n = 0, dlen;

	memcpy(out, s5, sizeof(s5));
	n += sizeof(s5);
	memcpy(scope, "_SB_", 4);
	dlen = aml_pkg(dev, device_op, 2, dev_body, sizeof(dev_body));
	memcpy(scope + 4, dev, dlen);
	n += aml_pkg(out + n, scope_op, 1, scope, 4 + dlen);
	return n;
}

static uint64_t build_dsdt(struct builder *b, const struct acpi_layout *l)
{
	uint8_t aml[128];
	unsigned len = build_aml(aml, l->cpuhp_base);
	uint64_t off = reserve(b, sizeof(struct plugvm_acpi_header) + len);
	struct plugvm_acpi_header *h = (void *)(b->buf + off);

	if (b->overflow)
		return 0;
	header(h, PLUGVM_ACPI_SIG_DSDT, (uint32_t)(sizeof(*h) + len), 2);
	memcpy(h + 1, aml, len);
	finish(h);
	return off;
}

/* The FADT's fixed hardware: the layout's ports, the same for pc and q35 but GPE0. */
static uint64_t build_fadt(struct builder *b, uint64_t dsdt_off, const struct acpi_layout *l)
{
	uint64_t off = reserve(b, sizeof(struct plugvm_acpi_fadt));
	struct plugvm_acpi_fadt *f = (void *)(b->buf + off);

	if (b->overflow)
		return 0;
	header(&f->header, PLUGVM_ACPI_SIG_FADT, sizeof(*f), 6);
	f->dsdt = (uint32_t)(b->base + dsdt_off);
	f->x_dsdt = b->base + dsdt_off;
	f->sci_int = PLUGVM_SCI_IRQ;
	f->smi_cmd = 0; /* ACPI mode is always on: SCI_EN is set and fixed */
	f->pm1a_evt_blk = l->pm_base;
	f->pm1a_cnt_blk = l->pm_base + 4u;
	f->pm_tmr_blk = l->pm_base + 8u;
	f->gpe0_blk = l->gpe0_base;
	f->pm1_evt_len = 4;
	f->pm1_cnt_len = 2;
	f->pm_tmr_len = 4;
	f->gpe0_blk_len = (uint8_t)l->gpe0_len;
	f->p_lvl2_lat = 0xfff; /* C2 not supported */
	f->p_lvl3_lat = 0xfff; /* C3 not supported */
	f->iapc_boot_arch = 1u << 2; /* VGA not present */
	f->flags = PLUGVM_ACPI_FADT_WBINVD | PLUGVM_ACPI_FADT_PROC_C1 |
		   PLUGVM_ACPI_FADT_SLP_BUTTON | PLUGVM_ACPI_FADT_RTC_S4;
	f->x_pm1a_evt_blk = io_gas(32, l->pm_base);
	f->x_pm1a_cnt_blk = io_gas(16, (uint16_t)(l->pm_base + 4u));
	f->x_pm_tmr_blk = io_gas(32, (uint16_t)(l->pm_base + 8u));
	f->x_gpe0_blk = io_gas((uint8_t)(l->gpe0_len * 8u), l->gpe0_base);
	finish(&f->header);
	return off;
}

static uint64_t build_madt(struct builder *b, const struct acpi_config *cfg)
{
	unsigned i, n_lapic = cfg->max_cpus < 255 ? cfg->max_cpus : 255;
	unsigned n_x2apic = cfg->max_cpus - n_lapic;
	uint64_t len = sizeof(struct plugvm_acpi_madt) +
		       n_lapic * sizeof(struct plugvm_madt_lapic) +
		       n_x2apic * sizeof(struct plugvm_madt_x2apic) +
		       sizeof(struct plugvm_madt_ioapic) + 2 * sizeof(struct plugvm_madt_iso) +
		       sizeof(struct plugvm_madt_lapic_nmi) + (n_x2apic ? 12 : 0);
	uint64_t off = reserve(b, len);
	struct plugvm_acpi_madt *madt = (void *)(b->buf + off);
	uint8_t *p = (uint8_t *)(madt + 1);

	if (b->overflow)
		return 0;
	header(&madt->header, PLUGVM_ACPI_SIG_MADT, (uint32_t)len, 3);
	madt->lapic_address = PLUGVM_LAPIC_BASE;
	madt->flags = PLUGVM_MADT_PCAT_COMPAT;

	/* Every possible CPU, present ones enabled: QEMU's layout, which hotplug relies on. */
	for (i = 0; i < cfg->max_cpus; i++) {
		uint32_t flags = i < cfg->nr_cpus ? PLUGVM_MADT_CPU_ENABLED : 0;

		if (i < 255) {
			struct plugvm_madt_lapic e = {
				.h = { PLUGVM_MADT_LAPIC, sizeof(e) },
				.uid = (uint8_t)i,
				.apic_id = (uint8_t)i,
				.flags = flags,
			};
			memcpy(p, &e, sizeof(e));
			p += sizeof(e);
		} else {
			struct plugvm_madt_x2apic e = {
				.h = { PLUGVM_MADT_X2APIC, sizeof(e) },
				.x2apic_id = i,
				.flags = flags,
				.uid = i,
			};
			memcpy(p, &e, sizeof(e));
			p += sizeof(e);
		}
	}
	{
		struct plugvm_madt_ioapic io = {
			.h = { PLUGVM_MADT_IOAPIC, sizeof(io) },
			.id = 0,
			.address = PLUGVM_IOAPIC_BASE,
			.gsi_base = 0,
		};
		struct plugvm_madt_iso iso0 = {
			.h = { PLUGVM_MADT_ISO, sizeof(iso0) },
			.bus = 0,
			.source = 0,
			.gsi = 2,
			.flags = 0,
		};
		struct plugvm_madt_iso sci = {
			.h = { PLUGVM_MADT_ISO, sizeof(sci) },
			.bus = 0,
			.source = PLUGVM_SCI_IRQ,
			.gsi = PLUGVM_SCI_IRQ,
			.flags = PLUGVM_MADT_ISO_ACTIVE_HIGH | PLUGVM_MADT_ISO_LEVEL,
		};
		struct plugvm_madt_lapic_nmi nmi = {
			.h = { PLUGVM_MADT_LAPIC_NMI, sizeof(nmi) },
			.uid = 0xff,
			.flags = 0,
			.lint = 1,
		};

		memcpy(p, &io, sizeof(io));
		p += sizeof(io);
		memcpy(p, &iso0, sizeof(iso0));
		p += sizeof(iso0);
		memcpy(p, &sci, sizeof(sci));
		p += sizeof(sci);
		memcpy(p, &nmi, sizeof(nmi));
		p += sizeof(nmi);
	}
	if (n_x2apic) {
		/* x2APIC NMI: type 10, len 12, flags, uid 0xffffffff (all), lint 1. */
		static const uint8_t x2nmi[12] = {
			PLUGVM_MADT_X2APIC_NMI, 12, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0
		};
		memcpy(p, x2nmi, sizeof(x2nmi));
		p += sizeof(x2nmi);
	}
	finish(&madt->header);
	return off;
}

gpa_t acpi_build(uint8_t *buf, uint64_t size, gpa_t base, const struct acpi_config *cfg)
{
	struct builder b = { .buf = buf, .size = size, .base = base };
	uint64_t rsdp_off, rsdt_off, xsdt_off, dsdt_off, fadt_off, madt_off;
	struct plugvm_acpi_rsdp *rsdp;
	struct plugvm_acpi_header *rsdt, *xsdt;
	uint32_t rsdt_entries[2];
	uint64_t xsdt_entries[2];

	if (base & 15 || !cfg->layout || cfg->nr_cpus == 0 || cfg->nr_cpus > cfg->max_cpus ||
	    cfg->max_cpus > PLUGVM_MAX_CPUS)
		return 0;
	rsdp_off = reserve(&b, sizeof(*rsdp));
	rsdt_off = reserve(&b, sizeof(*rsdt) + sizeof(rsdt_entries));
	xsdt_off = reserve(&b, sizeof(*xsdt) + sizeof(xsdt_entries));
	dsdt_off = build_dsdt(&b, cfg->layout);
	fadt_off = build_fadt(&b, dsdt_off, cfg->layout);
	madt_off = build_madt(&b, cfg);
	if (b.overflow || base + b.used > UINT32_MAX)
		return 0;

	rsdt_entries[0] = (uint32_t)(base + fadt_off);
	rsdt_entries[1] = (uint32_t)(base + madt_off);
	xsdt_entries[0] = base + fadt_off;
	xsdt_entries[1] = base + madt_off;

	rsdt = (void *)(buf + rsdt_off);
	header(rsdt, PLUGVM_ACPI_SIG_RSDT, sizeof(*rsdt) + sizeof(rsdt_entries), 1);
	memcpy(rsdt + 1, rsdt_entries, sizeof(rsdt_entries));
	finish(rsdt);
	xsdt = (void *)(buf + xsdt_off);
	header(xsdt, PLUGVM_ACPI_SIG_XSDT, sizeof(*xsdt) + sizeof(xsdt_entries), 1);
	memcpy(xsdt + 1, xsdt_entries, sizeof(xsdt_entries));
	finish(xsdt);

	rsdp = (void *)(buf + rsdp_off);
	memcpy(rsdp->signature, PLUGVM_ACPI_RSDP_SIG, 8);
	memcpy(rsdp->oem_id, ACPI_OEM_ID, 6);
	rsdp->revision = 2;
	rsdp->rsdt_address = (uint32_t)(base + rsdt_off);
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = base + xsdt_off;
	rsdp->checksum = (uint8_t)-acpi_checksum(rsdp, 20);
	rsdp->extended_checksum = (uint8_t)-acpi_checksum(rsdp, sizeof(*rsdp));
	return base + rsdp_off;
}
