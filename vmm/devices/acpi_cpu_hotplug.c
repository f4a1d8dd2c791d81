// SPDX-License-Identifier: MIT
/*
 * QEMU's ACPI CPU hotplug register block as a state machine (see acpi_cpu_hotplug.h), and
 * its place on the I/O bus. Static functions run with d->lock held.
 */
#include "acpi_cpu_hotplug.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../bus.h"

int acpi_cpu_hotplug_init(struct acpi_cpu_hotplug *d, unsigned nr_slots, unsigned nr_present,
			  const struct acpi_cpu_hotplug_ops *ops)
{
	unsigned i;

	if (!nr_slots || nr_present > nr_slots)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	d->slots = calloc(nr_slots, sizeof(*d->slots));
	if (!d->slots)
		return -ENOMEM;
	d->nr_slots = nr_slots;
	for (i = 0; i < nr_present; i++)
		d->slots[i].present = true;
	d->ops = *ops;
	/* QEMU 7.2's pc starts in legacy mode, except when the bitmap cannot cover the IDs. */
	d->modern = nr_slots > 8 * ACPI_CPU_HOTPLUG_LEGACY_LEN;
	pthread_mutex_init(&d->lock, NULL);
	return 0;
}

void acpi_cpu_hotplug_reset(struct acpi_cpu_hotplug *d, unsigned nr_present)
{
	unsigned i;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nr_slots; i++)
		d->slots[i] = (struct acpi_cpu_hotplug_slot){ .present = i < nr_present };
	d->modern = d->nr_slots > 8 * ACPI_CPU_HOTPLUG_LEGACY_LEN;
	d->pv = false;
	d->selector = 0;
	d->command = 0;
	d->ost_event = 0;
	pthread_mutex_unlock(&d->lock);
}

void acpi_cpu_hotplug_exit(struct acpi_cpu_hotplug *d)
{
	if (!d->slots)
		return;
	free(d->slots);
	d->slots = NULL;
	d->nr_slots = 0;
	pthread_mutex_destroy(&d->lock);
}

/* An event is pending: the GPE, or the paravirt notification once the guest listens. */
static void raise_gpe(struct acpi_cpu_hotplug *d)
{
	if (d->pv && d->ops.notify_pv)
		d->ops.notify_pv(d->ops.opaque);
	else if (!d->pv && d->ops.raise_gpe)
		d->ops.raise_gpe(d->ops.opaque);
}

static uint32_t trunc_size(uint32_t v, unsigned size)
{
	return size >= 4 ? v : v & ((1u << (8 * size)) - 1);
}

/* Legacy: bit n of the bitmap = APIC ID n present. */
static uint32_t legacy_read(const struct acpi_cpu_hotplug *d, unsigned offset, unsigned size)
{
	uint32_t v = 0;
	unsigned i, bit;

	for (i = 0; i < size; i++) {
		unsigned byte = offset + i;
		uint8_t b = 0;

		if (byte >= ACPI_CPU_HOTPLUG_LEGACY_LEN)
			break;
		for (bit = 0; bit < 8; bit++) {
			unsigned slot = byte * 8 + bit;

			if (slot < d->nr_slots && d->slots[slot].present)
				b |= (uint8_t)(1u << bit);
		}
		v |= (uint32_t)b << (8 * i);
	}
	return v;
}

static uint32_t block_read(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size)
{
	const struct acpi_cpu_hotplug_slot *s;
	uint32_t v = 0;

	if (size != 1 && size != 2 && size != 4)
		return 0;
	if (!d->modern)
		return legacy_read(d, offset, size);
	if (d->selector >= d->nr_slots)
		return 0;
	s = &d->slots[d->selector];
	switch (offset) {
	case 0: /* command data 2: the arch ID's upper half (APIC IDs fit in 32 bits) */
		v = 0;
		break;
	case 4:
		v = (s->present ? ACPI_CPU_HOTPLUG_STS_ENABLED : 0) |
		    (s->present && s->insert ? ACPI_CPU_HOTPLUG_STS_INSERT : 0) |
		    (s->remove ? ACPI_CPU_HOTPLUG_STS_REMOVE : 0);
		break;
	case 8:
		if (d->command == ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT)
			v = d->selector;
		else if (d->command == ACPI_CPU_HOTPLUG_CMD_ARCH_ID)
			v = d->selector; /* APIC ID == slot */
		break;
	default:
		break;
	}
	return trunc_size(v, size);
}

/* From the selector on, with wrap-around: the first slot with a pending event. */
static void select_next_event(struct acpi_cpu_hotplug *d)
{
	unsigned i;

	for (i = 0; i < d->nr_slots; i++) {
		unsigned slot = (d->selector + i) % d->nr_slots;
		const struct acpi_cpu_hotplug_slot *s = &d->slots[slot];

		if ((s->present && s->insert) || s->remove) {
			d->selector = slot;
			return;
		}
	}
}

/* The eject control's action on `slot`: false (nothing done) for an absent slot or 0. */
static bool eject(struct acpi_cpu_hotplug *d, unsigned slot)
{
	struct acpi_cpu_hotplug_slot *s = &d->slots[slot];

	if (!s->present || slot == 0)
		return false;
	s->present = false;
	s->insert = false;
	s->remove = false;
	if (d->ops.eject)
		d->ops.eject(d->ops.opaque, slot);
	return true;
}

static void control(struct acpi_cpu_hotplug *d, uint8_t ctl)
{
	struct acpi_cpu_hotplug_slot *s = &d->slots[d->selector];

	if (ctl & ~(ACPI_CPU_HOTPLUG_CTL_CLEAR_INSERT | ACPI_CPU_HOTPLUG_CTL_CLEAR_REMOVE |
		    ACPI_CPU_HOTPLUG_CTL_EJECT | ACPI_CPU_HOTPLUG_CTL_FW_EJECT))
		d->bad_writes++; /* reserved bits: ignored, the rest still acts, as QEMU */
	/* One action per write, in QEMU's order. */
	if (ctl & ACPI_CPU_HOTPLUG_CTL_CLEAR_INSERT) {
		s->insert = false;
	} else if (ctl & ACPI_CPU_HOTPLUG_CTL_CLEAR_REMOVE) {
		s->remove = false;
	} else if (ctl & ACPI_CPU_HOTPLUG_CTL_EJECT) {
		if (!eject(d, d->selector))
			d->bad_writes++;
	}
	/* ACPI_CPU_HOTPLUG_CTL_FW_EJECT: no firmware here to hand the eject to; ignored. */
}

static void block_write(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size, uint32_t value)
{
	if (size != 1 && size != 2 && size != 4) {
		d->bad_writes++;
		return;
	}
	value = trunc_size(value, size);
	if (!d->modern) {
		/* Byte 0 written with 0 switches to the modern block, for good. */
		if (offset == 0 && (value & 0xff) == 0) {
			d->modern = true;
			d->selector = 0;
			d->command = ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT;
		} else {
			d->bad_writes++;
		}
		return;
	}
	if (offset == 0) {
		d->selector = value; /* any value; out of range makes the rest inert */
		return;
	}
	if (d->selector >= d->nr_slots) {
		d->bad_writes++;
		return;
	}
	switch (offset) {
	case 4:
		control(d, (uint8_t)value);
		break;
	case 5:
		if ((value & 0xff) > ACPI_CPU_HOTPLUG_CMD_ARCH_ID) {
			d->bad_writes++;
			break;
		}
		d->command = (uint8_t)value;
		if (d->command == ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT)
			select_next_event(d);
		break;
	case 8:
		if (d->command == ACPI_CPU_HOTPLUG_CMD_OST_EVENT)
			d->ost_event = value;
		else if (d->command == ACPI_CPU_HOTPLUG_CMD_OST_STATUS && d->ops.ost)
			d->ops.ost(d->ops.opaque, d->selector, d->ost_event, value);
		break;
	default:
		d->bad_writes++;
		break;
	}
}

uint32_t acpi_cpu_hotplug_read(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size)
{
	uint32_t v;

	pthread_mutex_lock(&d->lock);
	v = block_read(d, offset, size);
	pthread_mutex_unlock(&d->lock);
	return v;
}

void acpi_cpu_hotplug_write(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size,
			    uint32_t value)
{
	pthread_mutex_lock(&d->lock);
	block_write(d, offset, size, value);
	pthread_mutex_unlock(&d->lock);
}

/* The bus handler: string I/O is `count` accesses, one lock hold. */
static void block_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		     unsigned count, bool is_write)
{
	struct acpi_cpu_hotplug *d = opaque;
	unsigned i, b;

	(void)vcpu_id;
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < count; i++) {
		uint8_t *p = data + (size_t)i * size;
		uint32_t v = 0;

		if (is_write) {
			for (b = 0; b < size && b < 4; b++)
				v |= (uint32_t)p[b] << (8 * b);
			block_write(d, (unsigned)offset, size, v);
		} else {
			v = block_read(d, (unsigned)offset, size);
			for (b = 0; b < size; b++)
				p[b] = b < 4 ? (uint8_t)(v >> (8 * b)) : 0;
		}
	}
	pthread_mutex_unlock(&d->lock);
}

int acpi_cpu_hotplug_attach(struct acpi_cpu_hotplug *d, struct bus *pio, uint16_t base)
{
	return bus_register(pio, base, ACPI_CPU_HOTPLUG_LEGACY_LEN, block_io, d,
			    "acpi-cpu-hotplug");
}

int acpi_cpu_hotplug_plug(struct acpi_cpu_hotplug *d, unsigned slot)
{
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (slot >= d->nr_slots) {
		ret = -EINVAL;
	} else if (d->slots[slot].present) {
		ret = -EEXIST;
	} else {
		d->slots[slot].present = true;
		d->slots[slot].remove = false;
		/* Added in legacy mode: no insert event, in QEMU too; guests reconcile. */
		d->slots[slot].insert = d->modern;
		raise_gpe(d);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int acpi_cpu_hotplug_unplug_request(struct acpi_cpu_hotplug *d, unsigned slot)
{
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (slot >= d->nr_slots)
		ret = -EINVAL;
	else if (!d->slots[slot].present)
		ret = -ENODEV;
	else if (slot == 0)
		ret = -EPERM;
	else if (!d->modern)
		ret = -EOPNOTSUPP;
	if (!ret) {
		d->slots[slot].remove = true;
		raise_gpe(d);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

bool acpi_cpu_hotplug_present(struct acpi_cpu_hotplug *d, unsigned slot)
{
	bool present;

	pthread_mutex_lock(&d->lock);
	present = slot < d->nr_slots && d->slots[slot].present;
	pthread_mutex_unlock(&d->lock);
	return present;
}

void acpi_cpu_hotplug_pv_listen(struct acpi_cpu_hotplug *d)
{
	pthread_mutex_lock(&d->lock);
	/* As the probe's write of 0 at offset 0: inserts are events from now on. */
	if (!d->modern) {
		d->modern = true;
		d->selector = 0;
		d->command = ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT;
	}
	d->pv = true;
	pthread_mutex_unlock(&d->lock);
}

unsigned acpi_cpu_hotplug_pv_claim(struct acpi_cpu_hotplug *d, uint64_t *present, uint64_t *insert,
				   uint64_t *remove, unsigned words)
{
	unsigned slot, n = 0;

	memset(present, 0, (size_t)words * sizeof(*present));
	memset(insert, 0, (size_t)words * sizeof(*insert));
	memset(remove, 0, (size_t)words * sizeof(*remove));
	pthread_mutex_lock(&d->lock);
	for (slot = 0; slot < d->nr_slots && slot / 64 < words; slot++) {
		struct acpi_cpu_hotplug_slot *s = &d->slots[slot];
		uint64_t bit = 1ull << (slot % 64);

		if (s->present)
			present[slot / 64] |= bit;
		/* As the ACPI walk sees them: an insert counts only while the slot is present. */
		if (s->present && s->insert) {
			insert[slot / 64] |= bit;
			n++;
		}
		if (s->remove) {
			remove[slot / 64] |= bit;
			n++;
		}
		s->insert = false;
		s->remove = false;
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

int acpi_cpu_hotplug_pv_done(struct acpi_cpu_hotplug *d, unsigned slot, bool online, int32_t result)
{
	int ret = 0;

	if (slot >= d->nr_slots)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->ops.ost)
		d->ops.ost(d->ops.opaque, slot, online ? 1 : 3, result ? 1 : 0);
	if (!online && !result && !eject(d, slot)) {
		d->bad_writes++;
		ret = -EPERM;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}
