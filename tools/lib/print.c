// SPDX-License-Identifier: MIT
/*
 * What a client tool prints and how it dies (see print.h): strings from the server made safe
 * for a terminal, QMP values as JSON without anything a terminal acts on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "vmm/utf8.h"

void die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status); /* atexit handlers run: plugvm-latency's ends its VM */
}

/*
 * A string from the server as text for a terminal: what utf8_printable_len() refuses
 * (control characters, escape sequences, invalid UTF-8, bidi overrides) is shown as \xNN,
 * so that the guest, whose names the server passes on, cannot drive the terminal. The
 * result lives until 8 more calls; NULL gives "(null)", as printf would.
 */
const char *tty(const char *s)
{
	static char bufs[8][1024];
	static unsigned next;
	char *out = bufs[next++ % 8];
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, n;

	if (!s)
		return "(null)";
	n = strlen(s);
	while (i < n && o + 5 < sizeof(bufs[0])) {
		size_t len = utf8_printable_len(p + i, n - i);

		if (len && o + len < sizeof(bufs[0])) {
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		} else if (len) {
			break;
		} else {
			o += (size_t)snprintf(out + o, 5, "\\x%02x", p[i++]);
		}
	}
	out[o] = '\0';
	return out;
}

/*
 * QMP values as JSON. json-c escapes C0 controls but passes DEL, C1 controls, invalid UTF-8
 * and bidi overrides through; those only occur inside strings, where they become \uXXXX
 * (U+FFFD for bytes that are not UTF-8): still the same JSON value where it can be, and
 * nothing a terminal acts on.
 */
void print_json(struct json_object *o)
{
	const unsigned char *p = (const unsigned char *)json_object_to_json_string_ext(
	    o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t i = 0, n = strlen((const char *)p);

	while (i < n) {
		size_t len = p[i] < 0x80 && p[i] != 0x7f ? 1 : utf8_printable_len(p + i, n - i);

		if (len) {
			fwrite(p + i, 1, len, stdout);
			i += len;
			continue;
		}
		/* A whole sequence that is well-formed but not printable keeps its code point. */
		if (p[i] == 0x7f) {
			fputs("\\u007f", stdout);
			i++;
		} else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			printf("\\u%04x", p[i + 1]);
			i += 2;
		} else if (p[i] == 0xe2 && i + 2 < n && (p[i + 1] == 0x80 || p[i + 1] == 0x81) &&
			   (p[i + 2] & 0xc0) == 0x80) {
			printf("\\u%04x", 0x2000 | (p[i + 1] & 0x3f) << 6 | (p[i + 2] & 0x3f));
			i += 3;
		} else {
			fputs("\\ufffd", stdout);
			i++;
		}
	}
	putchar('\n');
}
