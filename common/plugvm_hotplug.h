/* SPDX-License-Identifier: MIT */
/*
 * The paravirt CPU hotplug protocol (PLUGVM_FEATURE_HOTPLUG_PV): plugvm's replacement, for
 * its own guests, of the walk of QEMU's ACPI CPU hotplug register block, which stays for
 * QEMU and as the fallback. Both drive the same slots: a CPU added or removed through QMP
 * is an insert or a removal request whichever way the guest listens.
 *
 * Protocol:
 *   1. Listen: the guest fills a struct plugvm_hotplug_cmd with cmd LISTEN, the guest-
 *      physical address of a struct plugvm_hotplug_events (8-byte aligned, in RAM) and the
 *      vector and APIC ID (below 256) that are to be notified, and writes the command's
 *      guest-physical address (8-byte aligned, below 4 GiB) with one 32-bit OUT to
 *      PLUGVM_PORT_HOTPLUG_PV. plugvm writes `status` before the OUT completes. From then on
 *      an insert or a removal request is announced by a fixed, edge-triggered MSI with that
 *      vector to that APIC ID, not by the ACPI GPE (the ACPI block switches to its modern
 *      mode, for good, as if the guest had probed it). A second LISTEN replaces the first.
 *   2. Claim: one 32-bit IN from PLUGVM_PORT_HOTPLUG_PV writes, before it completes, every
 *      slot present and every pending insert and removal request into the events area, and
 *      clears those pending (as the ACPI block's clear-insert / clear-remove would); it reads
 *      the number of events claimed. Before a LISTEN it reads all ones.
 *   3. Done: for each claimed event, once the CPU came up (or failed to), or went (or
 *      refused to), one OUT of a command DONE: APIC ID, op (ONLINE for an insert, OFFLINE
 *      for a removal), result (0, or the guest's negative error) and the guest's duration.
 *      plugvm reports it as the ACPI block's _OST would (source 1 for an insert, 3 for a
 *      removal, status 0 for result 0, else 1), ejects the CPU when a removal succeeded
 *      (present, not APIC ID 0), and emits the hotplug report (PLUGVM_FEATURE_HOTPLUG_REPORT)
 *      with the guest's duration: _OST, eject and report in one exit.
 * Everything the guest writes is checked; a refused command leaves everything as it was and
 * gets a nonzero status.
 */
#ifndef PLUGVM_COMMON_HOTPLUG_H
#define PLUGVM_COMMON_HOTPLUG_H

#include <stdint.h>

#define PLUGVM_FEATURE_HOTPLUG_PV  (1u << 4) /* PLUGVM_PORT_HOTPLUG_PV exists */
#define PLUGVM_PORT_HOTPLUG_PV	   0xaf2c
#define PLUGVM_PORT_HOTPLUG_PV_LEN 4

#define PLUGVM_HOTPLUG_CMD_LISTEN 1u
#define PLUGVM_HOTPLUG_CMD_DONE	  2u

#define PLUGVM_HOTPLUG_OK     0u
#define PLUGVM_HOTPLUG_EINVAL 1u /* unknown command or op, a field out of range, reserved not 0 */
#define PLUGVM_HOTPLUG_EADDR  2u /* the events area is not 8-byte aligned RAM */
#define PLUGVM_HOTPLUG_ESTATE 3u /* DONE before LISTEN, or an eject of an absent CPU or of 0 */

/* The lowest vector a LISTEN may name (below are the exceptions), and the highest. */
#define PLUGVM_HOTPLUG_VECTOR_MIN 0x20u
#define PLUGVM_HOTPLUG_VECTOR_MAX 0xfeu

struct plugvm_hotplug_cmd {
	uint32_t cmd; /* PLUGVM_HOTPLUG_CMD_* */
	uint32_t status; /* written by plugvm: PLUGVM_HOTPLUG_OK or an error */
	/* LISTEN */
	uint64_t area; /* guest-physical address of struct plugvm_hotplug_events */
	uint32_t vector; /* PLUGVM_HOTPLUG_VECTOR_MIN..MAX */
	uint32_t dest_apic_id; /* below 256 */
	/* DONE */
	uint32_t apic_id;
	uint32_t op; /* plugvm_abi.h's PLUGVM_HOTPLUG_OP_ONLINE (an insert) or _OFFLINE */
	int32_t result; /* 0: online / offline (eject it); else the guest's negative error */
	uint32_t reserved; /* 0 */
	uint64_t guest_ns; /* how long the guest's bring-up / tear-down took */
};
_Static_assert(sizeof(struct plugvm_hotplug_cmd) == 48, "hotplug command is 48 bytes");

#define PLUGVM_HOTPLUG_WORDS 16 /* PLUGVM_MAX_CPUS (plugvm_abi.h) / 64 */

/* Bit n of word n / 64: APIC ID n. Written by plugvm on a claim; bits past maxcpus are 0. */
struct plugvm_hotplug_events {
	uint64_t present[PLUGVM_HOTPLUG_WORDS]; /* slots with a vCPU */
	uint64_t insert[PLUGVM_HOTPLUG_WORDS]; /* inserts claimed */
	uint64_t remove[PLUGVM_HOTPLUG_WORDS]; /* removal requests claimed */
};
_Static_assert(sizeof(struct plugvm_hotplug_events) == 384, "hotplug events are 384 bytes");

#endif
