/* SPDX-License-Identifier: MIT */
/* The IOAPIC: route a pin to a vector on one CPU, mask it. */
#ifndef PLUGVM_GUEST_X86_IOAPIC_H
#define PLUGVM_GUEST_X86_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

/* Mask every pin and the legacy 8259s. Boot CPU, once. */
void ioapic_init(uint64_t base);
/* Route `pin` to `vector` on `apic_id`; level/active-low per the MADT. Unmasks it. */
void ioapic_route(unsigned pin, unsigned vector, uint32_t apic_id, bool level, bool active_low);
void ioapic_mask(unsigned pin);

#endif
