// SPDX-License-Identifier: MIT
/*
 * ACPI fixed hardware as QEMU's PIIX4 PM (pc) or ICH9 LPC (q35) presents it, at the ports
 * of the machine's acpi_layout: PM1a event (STS write-1-to-clear, EN) and control (SCI_EN
 * fixed on, SLP_TYP/SLP_EN: S5 powers off), the 24-bit PM timer at 3.579545 MHz, and the
 * GPE0 block (4 bytes on pc, 16 on q35: STS W1C in the first half, EN in the second). The
 * SCI on GSI 9 is level-triggered: asserted while any enabled status bit is set.
 */
#include "acpi_pm.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../log.h"
#include "../vm.h"
#include "../x86/acpi_layout.h"
#include "plugvm_abi.h"

#define PM1_PWRBTN   (1u << 8)
#define PM1_STS_MASK 0x8d31u /* TMR, BM, GBL, PWRBTN, SLPBTN, RTC, WAK */

struct acpi_pm {
	struct vm *vm;
	unsigned gpe_half; /* bytes of GPE0 status, and of enable: layout->gpe0_len / 2 */
	pthread_mutex_t lock;
	/* Guarded by lock (the first gpe_half bytes of each are the block's): */
	uint16_t pm1_sts, pm1_en, pm1_cnt;
	uint8_t gpe_sts[ACPI_LAYOUT_GPE0_MAX_LEN / 2];
	uint8_t gpe_en[ACPI_LAYOUT_GPE0_MAX_LEN / 2];
	int sci_level;
	struct log_ratelimit rl;
};

/* Caller holds pm->lock. */
static void update_sci(struct acpi_pm *pm)
{
	int level = (pm->pm1_sts & pm->pm1_en) != 0;
	unsigned i;

	for (i = 0; i < pm->gpe_half; i++)
		level |= (pm->gpe_sts[i] & pm->gpe_en[i]) != 0;
	if (level != pm->sci_level) {
		pm->sci_level = level;
		kvm_irq_line(&pm->vm->kvm, PLUGVM_SCI_IRQ, level);
	}
}

static uint32_t pm_timer(void)
{
	struct timespec ts;
	unsigned __int128 ticks;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ticks = ((unsigned __int128)ts.tv_sec * 1000000000u + (unsigned)ts.tv_nsec) *
		PLUGVM_PM_TMR_HZ / 1000000000u;
	return (uint32_t)ticks & 0xffffffu;
}

/* Caller holds pm->lock. Returns 0 when the guest powered off (S5), else -1. */
static int write_cnt(struct acpi_pm *pm, uint16_t v)
{
	unsigned typ = (v >> 10) & 7;

	pm->pm1_cnt = (uint16_t)((v & ~PLUGVM_PM1_CNT_SLP_EN) | PLUGVM_PM1_CNT_SCI_EN);
	if (!(v & PLUGVM_PM1_CNT_SLP_EN))
		return -1;
	if (typ == PLUGVM_S5_SLP_TYP) {
		log_info("guest powered off (ACPI S5)");
		return 0;
	}
	log_guest_warn(&pm->rl, "guest asked for sleep type %u; only S5 (%u) is supported", typ,
		       PLUGVM_S5_SLP_TYP);
	return -1;
}

static void pm_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		  unsigned count, bool is_write)
{
	struct acpi_pm *pm = opaque;
	int stop = -1;
	unsigned i, n = size * count;
	uint32_t timer = 0;
	bool have_timer = false;

	(void)vcpu_id;
	pthread_mutex_lock(&pm->lock);
	for (i = 0; i < n; i++) {
		unsigned off = (unsigned)offset + (i % size);
		uint8_t *b = &data[i];

		if (i % size == 0)
			have_timer = false;

		if (off < 2) { /* PM1 status, write 1 to clear */
			unsigned shift = off * 8;

			if (is_write)
				pm->pm1_sts &= (uint16_t) ~((*b << shift) & PM1_STS_MASK);
			else
				*b = (uint8_t)(pm->pm1_sts >> shift);
		} else if (off < 4) { /* PM1 enable */
			unsigned shift = (off - 2) * 8;

			if (is_write)
				pm->pm1_en = (uint16_t)((pm->pm1_en & ~(0xffu << shift)) |
							((unsigned)*b << shift));
			else
				*b = (uint8_t)(pm->pm1_en >> shift);
		} else if (off < 6) { /* PM1 control */
			unsigned shift = (off - 4) * 8;

			if (is_write) {
				uint16_t v = (uint16_t)((pm->pm1_cnt & ~(0xffu << shift)) |
							((unsigned)*b << shift));
				/* A 16-bit write acts once, on its high byte. */
				if (off == 5 || size == 1)
					stop = write_cnt(pm, v);
				else
					pm->pm1_cnt = (uint16_t)(v | PLUGVM_PM1_CNT_SCI_EN);
			} else {
				*b = (uint8_t)(pm->pm1_cnt >> shift);
			}
		} else if (off >= 8 && off < 12) { /* PM timer */
			/*
			 * One clock read per access: reading it per byte tore a 4-byte read
			 * whenever a carry crossed a byte between two reads (the guest saw
			 * the counter step back 177 ticks, or jump by 65536 when the host
			 * preempted this thread between two bytes).
			 */
			if (!is_write && !have_timer) {
				timer = pm_timer();
				have_timer = true;
			}
			if (!is_write)
				*b = (uint8_t)(timer >> ((off - 8) * 8));
		} else if (!is_write) {
			*b = 0;
		}
	}
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
	if (stop >= 0) /* the machine's power-off action decides what follows */
		vm_guest_poweroff(pm->vm);
}

static void gpe_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		   unsigned count, bool is_write)
{
	struct acpi_pm *pm = opaque;
	const unsigned half = pm->gpe_half;
	unsigned i, n = size * count;

	(void)vcpu_id;
	pthread_mutex_lock(&pm->lock);
	for (i = 0; i < n; i++) {
		unsigned off = (unsigned)offset + (i % size);

		/* An access running past the block's end: the bytes past it are no register. */
		if (off >= 2 * half) {
			if (!is_write)
				data[i] = 0xff;
		} else if (off < half) {
			if (is_write)
				pm->gpe_sts[off] &= (uint8_t)~data[i];
			else
				data[i] = pm->gpe_sts[off];
		} else {
			if (is_write)
				pm->gpe_en[off - half] = data[i];
			else
				data[i] = pm->gpe_en[off - half];
		}
	}
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

void acpi_pm_raise_gpe(struct vm *vm, unsigned bit)
{
	struct acpi_pm *pm = vm->pm;

	if (bit >= 8 * pm->gpe_half)
		return;
	pthread_mutex_lock(&pm->lock);
	pm->gpe_sts[bit / 8] |= (uint8_t)(1u << (bit % 8));
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

void acpi_pm_power_button(struct vm *vm)
{
	struct acpi_pm *pm = vm->pm;

	pthread_mutex_lock(&pm->lock);
	pm->pm1_sts |= PM1_PWRBTN;
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

int acpi_pm_init(struct vm *vm)
{
	const struct acpi_layout *l = acpi_layout_of(vm->cfg->machine);
	struct acpi_pm *pm;
	int ret;

	if (!l || l->gpe0_len % 2 || l->gpe0_len > ACPI_LAYOUT_GPE0_MAX_LEN) {
		log_error("acpi-pm: no port layout for machine %d", (int)vm->cfg->machine);
		return -EINVAL;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->vm = vm;
	pm->gpe_half = l->gpe0_len / 2u;
	pm->pm1_cnt = PLUGVM_PM1_CNT_SCI_EN;
	pthread_mutex_init(&pm->lock, NULL);
	ret = bus_register(&vm->pio, l->pm_base, l->pm_len, pm_io, pm, "acpi-pm");
	if (!ret)
		ret = bus_register(&vm->pio, l->gpe0_base, l->gpe0_len, gpe_io, pm, "acpi-gpe0");
	if (ret) {
		pthread_mutex_destroy(&pm->lock);
		free(pm);
		return ret;
	}
	vm->pm = pm;
	return 0;
}

void acpi_pm_reset(struct vm *vm)
{
	struct acpi_pm *pm = vm->pm;

	pthread_mutex_lock(&pm->lock);
	pm->pm1_sts = pm->pm1_en = 0;
	pm->pm1_cnt = PLUGVM_PM1_CNT_SCI_EN;
	memset(pm->gpe_sts, 0, sizeof(pm->gpe_sts));
	memset(pm->gpe_en, 0, sizeof(pm->gpe_en));
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

void acpi_pm_exit(struct vm *vm)
{
	if (!vm->pm)
		return;
	pthread_mutex_destroy(&vm->pm->lock);
	free(vm->pm);
	vm->pm = NULL;
}
