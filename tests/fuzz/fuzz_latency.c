// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/devices/latency.c, what a hostile guest controls. The input: a
 * struct plugvm_latency_register (its first 32 bytes), then bytes that become the start of
 * guest RAM at LAT_AREA (the area's header, outlier ring, states, records; the rest zero).
 * The registration goes through the real port; every snapshot latency_read() hands out must
 * hold only checked values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/devices/latency.h"
#include "vmm/log.h"
#include "vmm/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RAM	 (1u << 20)
#define LAT_REG	 0x1000u
#define LAT_AREA 0x10000u

static struct vm vm;
static struct vm_config cfg;
static struct latency_snapshot snap;

static void check(void)
{
	unsigned k, i;

	if (snap.hist_us > PLUGVM_LATENCY_HIST_MAX || snap.nr_states > PLUGVM_LATENCY_MAX_STATES ||
	    snap.nr_outliers > PLUGVM_LATENCY_OUTLIERS)
		abort();
	for (k = 0; k < PLUGVM_LATENCY_MAX_CPUS; k++) {
		const struct plugvm_latency_cpu *c = &snap.cpus[k];

		for (i = snap.hist_us; i < PLUGVM_LATENCY_HIST_MAX; i++)
			if (c->hist[i])
				abort();
		if (c->count && c->min_ns > c->max_ns)
			abort();
	}
	for (k = 0; k < snap.nr_states; k++)
		for (i = 0; i < PLUGVM_LATENCY_STATE_NAME; i++) {
			char ch = snap.states[k].name[i];

			if (!ch)
				break;
			if (ch < 0x20 || ch > 0x7e || i == PLUGVM_LATENCY_STATE_NAME - 1)
				abort();
		}
	for (k = 0; k < snap.nr_outliers; k++) {
		if (snap.outliers[k].cpu >= PLUGVM_LATENCY_MAX_CPUS)
			abort();
		for (i = 0; i < PLUGVM_LATENCY_MAX_CPUS; i++) {
			unsigned st = snap.outliers[k].hp[i] & ~PLUGVM_LATENCY_HP_DOWN;

			if (snap.outliers[k].hp[i] && (!st || st > snap.nr_states))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *ram;
	uint8_t out[4];
	uint32_t gpa = LAT_REG;
	size_t n;

	if (!vm.cfg) {
		vm.cfg = &cfg;
		vm.pio.name = "pio";
		if (mem_init(&vm.mem, RAM) || latency_init(&vm))
			abort();
		log_set_level(LOG_ERROR); /* the guest's refusals are expected here */
	}
	ram = mem_gpa_ptr(&vm.mem, 0, RAM);
	memset(ram, 0, RAM);
	n = size < sizeof(struct plugvm_latency_register) ? size
							  : sizeof(struct plugvm_latency_register);
	memcpy(ram + LAT_REG, data, n);
	if (size > n)
		memcpy(ram + LAT_AREA, data + n,
		       size - n < RAM - LAT_AREA ? size - n : RAM - LAT_AREA);
	memcpy(out, &gpa, 4);
	bus_dispatch(&vm.pio, 0, PLUGVM_PORT_LATENCY, out, 4, 1, true);
	if (latency_read(&vm, &snap) == 0)
		check();
	return 0;
}
