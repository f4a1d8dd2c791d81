/* SPDX-License-Identifier: MIT */
/*
 * The virtio console (slot PLUGVM_VIRTIO_SLOT_CONSOLE, common/plugvm_virtio.h): once up it
 * is the console and the 16550 falls silent, except for panics, for a device that stops
 * consuming (the driver falls back and warns) and on hypervisors without it (QEMU). Input
 * typed on the VMM's stdin reaches a tiny line monitor (help, echo, cpus, stats, poweroff).
 * `virtio_console=off` on the command line keeps the 16550 as the console.
 */
#ifndef PLUGVM_DRIVERS_VIRTIO_CONSOLE_H
#define PLUGVM_DRIVERS_VIRTIO_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Bring up the device's transmit side and make it the console. Boot CPU, once, after
 * virtio_mmio_probe(), before the other CPUs run. Returns true if output now goes through
 * virtio; false (silently) without the device or with virtio_console=off.
 */
bool virtio_console_init(void);
/* Start the input side (receive buffers, monitor thread). Thread context, once. */
void virtio_console_start(void);
/* True while console output goes through virtio (not fallen back to the 16550). */
bool virtio_console_active(void);
/*
 * Something other than this driver wrote the device's registers (the `hostile` self-test):
 * have the input thread reset it and set it up again, and wait at most timeout_ns for that.
 * Thread context. Returns 0 (done, or the console already fell back to the 16550) or
 * -ETIMEDOUT.
 */
int virtio_console_recover(uint64_t timeout_ns);

/* Notifications sent to the device for output so far (the monitor's `stats`). Any context. */
unsigned long virtio_console_kicks(void);

#endif
