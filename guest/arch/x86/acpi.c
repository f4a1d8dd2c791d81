// SPDX-License-Identifier: MIT
/* ACPI static tables (no AML interpreter): FADT, MADT, DSDT \_S5. Pure C over acpi_os_map(). */
#include "acpi.h"

#include "kernel/compiler.h"
#include "kernel/errno.h"
#include "kernel/printk.h"
#include "kernel/string.h"

#define ACPI_MAX_TABLE_LEN (16u << 20)

static struct acpi_info info;
static const struct plugvm_acpi_header *root; /* XSDT or RSDT */
static unsigned root_entry_size;

const struct acpi_info *acpi_get_info(void)
{
	return &info;
}

static uint8_t sum(const void *p, uint64_t len)
{
	const uint8_t *b = p;
	uint8_t s = 0;

	while (len--)
		s = (uint8_t)(s + *b++);
	return s;
}

static void warn(const char *what, uint64_t pa, const char *why)
{
	info.nr_warnings++;
	pr_warn("ACPI: %s at %#lx refused: %s\n", what, (unsigned long)pa, why);
}

/* Map and validate a table; `sig` may be NULL to accept any signature. */
static const struct plugvm_acpi_header *map_table(uint64_t pa, const char *sig)
{
	const struct plugvm_acpi_header *h = acpi_os_map(pa, sizeof(*h));
	char name[5] = { 0 };

	if (!h) {
		warn(sig ? sig : "table", pa, "outside the memory map");
		return NULL;
	}
	memcpy(name, h->signature, 4);
	if (sig && memcmp(h->signature, sig, 4)) {
		warn(sig, pa, "wrong signature");
		return NULL;
	}
	if (h->length < sizeof(*h) || h->length > ACPI_MAX_TABLE_LEN) {
		warn(name, pa, "bad length");
		return NULL;
	}
	if (!acpi_os_map(pa, h->length)) {
		warn(name, pa, "length runs outside the memory map");
		return NULL;
	}
	if (sum(h, h->length)) {
		warn(name, pa, "bad checksum");
		return NULL;
	}
	return h;
}

static const struct plugvm_acpi_rsdp *check_rsdp(uint64_t pa)
{
	const struct plugvm_acpi_rsdp *r = acpi_os_map(pa, 20);

	if (!r || memcmp(r->signature, PLUGVM_ACPI_RSDP_SIG, 8) || sum(r, 20))
		return NULL;
	if (r->revision >= 2) {
		/* Only 20 bytes are mapped so far: map the 2.0 fields before reading length. */
		if (!acpi_os_map(pa, sizeof(*r)) || r->length < sizeof(*r) || r->length > 4096 ||
		    !acpi_os_map(pa, r->length) || sum(r, r->length))
			return NULL;
	}
	return r;
}

/* The BIOS search: the first KiB of the EBDA, then 0xe0000-0xfffff, 16-byte steps. */
static uint64_t find_rsdp(void)
{
	const uint16_t *ebda_seg = acpi_os_map(0x40e, 2);
	uint64_t pa;

	if (ebda_seg && *ebda_seg) {
		uint64_t ebda = (uint64_t)*ebda_seg << 4;

		for (pa = ebda; pa < ebda + 1024; pa += 16)
			if (check_rsdp(pa))
				return pa;
	}
	for (pa = 0xe0000; pa < 0x100000; pa += 16)
		if (check_rsdp(pa))
			return pa;
	return 0;
}

const struct plugvm_acpi_header *acpi_find_table(const char sig[4])
{
	unsigned i, n;

	if (!root)
		return NULL;
	n = (root->length - sizeof(*root)) / root_entry_size;
	for (i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)(root + 1) + i * root_entry_size;
		uint64_t pa = 0;
		const struct plugvm_acpi_header *h;

		memcpy(&pa, e, root_entry_size);
		h = acpi_os_map(pa, sizeof(*h));
		if (h && !memcmp(h->signature, sig, 4))
			return map_table(pa, sig);
	}
	return NULL;
}

/* Decode an AML PkgLength; returns bytes consumed (1-4). */
static unsigned pkglen_size(uint8_t lead)
{
	return 1 + (lead >> 6);
}

/* \_S5's first package element, the SLP_TYPa value, from the DSDT's AML bytes. */
static void scan_s5(const struct plugvm_acpi_header *dsdt)
{
	const uint8_t *p = (const uint8_t *)(dsdt + 1);
	uint32_t n = dsdt->length - sizeof(*dsdt), i;

	for (i = 0; i + 8 < n; i++) {
		uint32_t j;

		if (memcmp(p + i, "_S5_", 4) || i == 0 || p[i + 4] != 0x12)
			continue;
		if (p[i - 1] != 0x08 && !(i >= 2 && p[i - 1] == '\\' && p[i - 2] == 0x08))
			continue;
		j = i + 5 + pkglen_size(p[i + 5]) + 1; /* PackageOp, PkgLength, NumElements */
		if (j >= n)
			return;
		switch (p[j]) {
		case 0x00: /* ZeroOp */
		case 0x01: /* OneOp */
			info.s5_slp_typ = p[j];
			break;
		case 0x0a: /* BytePrefix */
			if (j + 1 >= n)
				return;
			info.s5_slp_typ = p[j + 1];
			break;
		default:
			return;
		}
		info.have_s5 = true;
		return;
	}
}

/*
 * QEMU's GED (hw/acpi/generic_event_device.c, build_ged_aml()): the device with
 * _HID "ACPI0013", its _CRS an Extended Interrupt descriptor (0x89, length 6, one
 * interrupt) and its OperationRegion EREG (SystemMemory, DWordConst base, ByteConst 4).
 * Both must be found; otherwise the guest has no GED (and says so where it matters).
 */
static void scan_ged(const struct plugvm_acpi_header *dsdt)
{
	static const uint8_t ereg[] = { 0x5b, 0x80, 'E', 'R', 'E', 'G', 0x00, 0x0c };
	const uint8_t *p = (const uint8_t *)(dsdt + 1);
	uint32_t n = dsdt->length - sizeof(*dsdt), i, j, hid = 0, irq = 0, reg = 0;

	for (i = 0; i + 8 <= n && !hid; i++)
		if (!memcmp(p + i, "ACPI0013", 8))
			hid = i + 8;
	if (!hid)
		return;
	/* The _CRS sits next to the _HID inside the device: look a little either side. */
	for (j = hid > 96 ? hid - 96 : 0; j + 9 <= n && j < hid + 96 && !irq; j++)
		if (p[j] == 0x89 && p[j + 1] == 6 && p[j + 2] == 0 && p[j + 4] == 1)
			irq = j;
	for (j = hid; j + sizeof(ereg) + 6 <= n && j < hid + 256 && !reg; j++)
		if (!memcmp(p + j, ereg, sizeof(ereg)) && p[j + 12] == 0x0a && p[j + 13] == 4)
			reg = j + sizeof(ereg);
	if (!irq || !reg)
		return;
	memcpy(&info.ged_gsi, p + irq + 5, 4);
	info.ged_level = !(p[irq + 3] & 0x02);
	info.ged_active_low = p[irq + 3] & 0x04;
	info.ged_evt_sel = (uint64_t)p[reg] | (uint64_t)p[reg + 1] << 8 |
			   (uint64_t)p[reg + 2] << 16 | (uint64_t)p[reg + 3] << 24;
	info.have_ged = true;
}

static void parse_fadt(const struct plugvm_acpi_header *h)
{
	const struct plugvm_acpi_fadt *f = (const void *)h;
	const struct plugvm_acpi_header *dsdt;

	if (h->length < PLUGVM_ACPI_FADT_REV1_LEN) {
		warn("FACP", 0, "shorter than a revision 1 FADT");
		return;
	}
	info.have_fadt = true;
	info.sci_irq = f->sci_int;
	info.sci_gsi = f->sci_int;
	info.sci_level = true; /* ACPI: the SCI is level, active low, unless overridden */
	info.sci_active_low = true;
	info.smi_cmd = f->smi_cmd;
	info.acpi_enable = f->acpi_enable;
	info.pm1a_evt_blk = f->pm1a_evt_blk;
	info.pm1a_cnt_blk = f->pm1a_cnt_blk;
	info.pm_tmr_blk = f->pm_tmr_blk;
	info.gpe0_blk = f->gpe0_blk;
	info.pm1_evt_len = f->pm1_evt_len;
	info.gpe0_blk_len = f->gpe0_blk_len;
	info.fadt_flags = f->flags;
	info.dsdt = f->dsdt;
	if (h->length >= offsetof(struct plugvm_acpi_fadt, x_dsdt) + 8 && f->x_dsdt)
		info.dsdt = f->x_dsdt;
	if (h->length >= offsetof(struct plugvm_acpi_fadt, sleep_status_reg))
		info.sleep_control = f->sleep_control_reg;
	if (info.dsdt && (dsdt = map_table(info.dsdt, PLUGVM_ACPI_SIG_DSDT))) {
		scan_s5(dsdt);
		if (info.fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED)
			scan_ged(dsdt);
	}
}

#define SEEN_IDS 4096
static uint64_t seen_ids[SEEN_IDS / 64]; /* APIC IDs below SEEN_IDS already listed */

static bool seen_before(uint32_t apic_id)
{
	unsigned i;

	if (apic_id < SEEN_IDS) {
		bool seen = seen_ids[apic_id / 64] & (1ull << (apic_id % 64));

		seen_ids[apic_id / 64] |= 1ull << (apic_id % 64);
		return seen;
	}
	for (i = 0; i < info.nr_cpus; i++) /* rare: only huge x2APIC IDs are scanned */
		if (info.cpus[i].apic_id == apic_id)
			return true;
	return false;
}

static void add_cpu(uint32_t apic_id, uint32_t uid, uint32_t flags)
{
	/* Disabled entries are possible CPUs too: QEMU lists hot-pluggable slots that way. */
	if (seen_before(apic_id)) {
		info.nr_warnings++;
		pr_warn("ACPI: MADT lists APIC ID %u twice; second entry ignored\n", apic_id);
		return;
	}
	if (info.nr_cpus == ACPI_MAX_CPUS) {
		info.nr_warnings++;
		pr_warn("ACPI: more than %u CPUs; APIC ID %u ignored\n", ACPI_MAX_CPUS, apic_id);
		return;
	}
	info.cpus[info.nr_cpus++] = (struct acpi_cpu){
		.apic_id = apic_id,
		.uid = uid,
		.enabled = flags & PLUGVM_MADT_CPU_ENABLED,
		.online_capable = flags & PLUGVM_MADT_CPU_ONLINE_CAPABLE,
	};
}

static void parse_madt(const struct plugvm_acpi_header *h)
{
	const struct plugvm_acpi_madt *m = (const void *)h;
	const uint8_t *p, *end = (const uint8_t *)h + h->length;

	if (h->length < sizeof(*m)) {
		warn("APIC", 0, "too short");
		return;
	}
	info.have_madt = true;
	info.lapic_addr = m->lapic_address;
	for (p = (const uint8_t *)(m + 1); p + 2 <= end; p += p[1]) {
		uint8_t type = p[0], len = p[1];

		if (len < 2 || p + len > end) {
			warn("APIC", 0, "entry runs past the table end");
			return;
		}
		if (type == PLUGVM_MADT_LAPIC && len >= sizeof(struct plugvm_madt_lapic)) {
			struct plugvm_madt_lapic e;

			memcpy(&e, p, sizeof(e));
			add_cpu(e.apic_id, e.uid, e.flags);
		} else if (type == PLUGVM_MADT_X2APIC && len >= sizeof(struct plugvm_madt_x2apic)) {
			struct plugvm_madt_x2apic e;

			memcpy(&e, p, sizeof(e));
			add_cpu(e.x2apic_id, e.uid, e.flags);
		} else if (type == PLUGVM_MADT_IOAPIC && len >= sizeof(struct plugvm_madt_ioapic)) {
			struct plugvm_madt_ioapic e;

			memcpy(&e, p, sizeof(e));
			if (!info.ioapic_addr) {
				info.ioapic_addr = e.address;
				info.ioapic_gsi_base = e.gsi_base;
			}
		} else if (type == PLUGVM_MADT_ISO && len >= sizeof(struct plugvm_madt_iso)) {
			struct plugvm_madt_iso e;

			memcpy(&e, p, sizeof(e));
			if (info.have_fadt && e.source == info.sci_irq) {
				unsigned pol = e.flags & 3, trig = (e.flags >> 2) & 3;

				info.sci_gsi = e.gsi;
				if (pol)
					info.sci_active_low = pol == 3;
				if (trig)
					info.sci_level = trig == 3;
			}
		}
	}
}

int acpi_init(uint64_t rsdp_pa)
{
	const struct plugvm_acpi_rsdp *rsdp;
	const struct plugvm_acpi_header *h;

	memset(&info, 0, sizeof(info));
	memset(seen_ids, 0, sizeof(seen_ids));
	root = NULL;
	if (!rsdp_pa)
		rsdp_pa = find_rsdp();
	rsdp = rsdp_pa ? check_rsdp(rsdp_pa) : NULL;
	if (!rsdp) {
		warn("RSDP", rsdp_pa, rsdp_pa ? "bad signature or checksum" : "not found");
		return -ENODEV;
	}
	info.rsdp = rsdp_pa;
	if (rsdp->revision >= 2 && rsdp->xsdt_address) {
		root = map_table(rsdp->xsdt_address, PLUGVM_ACPI_SIG_XSDT);
		root_entry_size = 8;
	}
	if (!root && rsdp->rsdt_address) {
		root = map_table(rsdp->rsdt_address, PLUGVM_ACPI_SIG_RSDT);
		root_entry_size = 4;
	}
	if (!root)
		return -ENODEV;
	/* FADT first: the MADT's interrupt overrides refer to its SCI. */
	h = acpi_find_table(PLUGVM_ACPI_SIG_FADT);
	if (h)
		parse_fadt(h);
	h = acpi_find_table(PLUGVM_ACPI_SIG_MADT);
	if (h)
		parse_madt(h);
	return 0;
}
