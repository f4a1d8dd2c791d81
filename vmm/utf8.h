/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 checks for strings that come from the guest and go to QMP clients and terminals:
 * one decoder, shared by the VMM (agent_str_clean()) and the tools (tools/lib/print.c).
 * Header-only, no state.
 */
#ifndef PLUGVM_VMM_UTF8_H
#define PLUGVM_VMM_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length of the UTF-8 sequence at p[0..n) when it is well-formed (shortest form, no
 * surrogate, at most U+10FFFF) and prints as text: not a control character (C0, DEL, C1),
 * not a line or paragraph separator, not a bidirectional override or isolate (text that
 * reorders what a terminal shows). 0 otherwise, and for n == 0.
 */
static inline size_t utf8_printable_len(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (!n)
		return 0;
	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, beyond Unicode, surrogate */
	if (cp <= 0x9f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0; /* C1; separators; bidi embeddings, overrides, isolates */
	return len;
}

#endif
