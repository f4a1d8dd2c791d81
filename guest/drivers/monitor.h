/* SPDX-License-Identifier: MIT */
/*
 * The console monitor: lines typed on a console (help, echo TEXT, cpus, stats, threads,
 * poweroff) run as commands whose answers go to the console. Each input source keeps its
 * own line buffer; virtio-console's "vcon" thread and the 16550's "ttyS0-rx" thread feed it.
 */
#ifndef PLUGVM_DRIVERS_MONITOR_H
#define PLUGVM_DRIVERS_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MONITOR_LINE_MAX 128

struct monitor_line {
	char buf[MONITOR_LINE_MAX];
	size_t len;
	bool after_cr; /* the last byte was CR: an LF now ends no second line */
};

/*
 * Feed `n` typed bytes; each CR, LF or CR LF ends a line and runs it (monitor_run()).
 * Echoes to the consoles what it takes, as a serial terminal does: printable ASCII as it is,
 * a line end as "\r\n", a backspace or DEL that erases as "\b \b"; what it drops (control
 * characters, bytes >= 0x7f, what does not fit, a backspace on an empty line) echoes nothing.
 * Thread context (commands printk, and `poweroff` does not return); one thread per `m`.
 */
void monitor_input(struct monitor_line *m, const uint8_t *p, size_t n);

/* Run one typed line (s[0..n), no line end) as a command. Context: monitor_input()'s. */
void monitor_run(const char *s, size_t n);

#endif
