// SPDX-License-Identifier: MIT
/*
 * The console monitor's line editor (see monitor.h): typed bytes become a line, echoed as a
 * serial terminal in canonical mode echoes them (ECHO, ECHOE), and each line ends in
 * monitor_run(). Host-tested: tests/unit/test_monitor.c.
 */
#include "drivers/monitor.h"

#include "kernel/printk.h"

/* Echo bytes gathered before one console write: at most 3 per typed byte ("\b \b"). */
#define ECHO_MAX 64

struct echo {
	char buf[ECHO_MAX];
	size_t len;
};

static void echo_flush(struct echo *e)
{
	if (e->len)
		console_write(e->buf, e->len);
	e->len = 0;
}

static void echo_add(struct echo *e, const char *s, size_t n)
{
	if (e->len + n > sizeof(e->buf))
		echo_flush(e);
	while (n--)
		e->buf[e->len++] = *s++;
}

void monitor_input(struct monitor_line *m, const uint8_t *p, size_t n)
{
	struct echo e = { .len = 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t c = p[i];
		bool after_cr = m->after_cr;

		m->after_cr = c == '\r';
		if (c == '\n' && after_cr)
			continue; /* the LF of a CR LF pair: one line end, not two */
		if (c == '\r' || c == '\n') {
			/* The echo before the command's answer: the consoles write "\r\n". */
			echo_add(&e, "\n", 1);
			echo_flush(&e);
			monitor_run(m->buf, m->len);
			m->len = 0;
		} else if (c == 0x7f || c == '\b') {
			if (m->len) {
				m->len--;
				echo_add(&e, "\b \b", 3);
			}
		} else if (m->len < MONITOR_LINE_MAX && c >= ' ' && c < 0x7f) {
			m->buf[m->len++] = (char)c;
			echo_add(&e, (const char *)&c, 1);
		}
	}
	echo_flush(&e);
}
