/* SPDX-License-Identifier: MIT */
/*
 * The console monitor: lines typed on a console (help, echo TEXT, cpus, stats, threads,
 * poweroff) run as commands whose answers go to the console. Each input source keeps its
 * own line buffer; virtio-console's "vcon" thread and the 16550's "ttyS0-rx" thread feed it.
 */
#ifndef PLUGVM_DRIVERS_MONITOR_H
#define PLUGVM_DRIVERS_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#define MONITOR_LINE_MAX 128

struct monitor_line {
	char buf[MONITOR_LINE_MAX];
	size_t len;
};

/*
 * Feed `n` typed bytes; each CR or LF ends a line and runs it (backspace edits, control
 * characters and what does not fit are dropped). Thread context (commands printk, and
 * `poweroff` does not return); one thread per `m`.
 */
void monitor_input(struct monitor_line *m, const uint8_t *p, size_t n);

#endif
