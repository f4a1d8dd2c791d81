// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: guest/kernel/cmdline.c. The input is the command line; lookups use
 * fixed names and names taken from the input itself, and every value must lie inside the
 * stored line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cmdline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(const char *name)
{
	const char *line = cmdline_get(), *v;
	size_t len = 0, line_len = strlen(line);

	v = cmdline_value(name, &len);
	if (v) {
		if (v < line || v > line + line_len || len > line_len - (size_t)(v - line))
			abort();
		cmdline_list_has(v, len, "cpuhp");
		cmdline_list_has(v, len, "");
		cmdline_list_has(v, len, name);
	}
	cmdline_flag(name);
	cmdline_uint(name, 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "hz", "halt", "selftest", "verbose", "rt", "x", "" };
	char *s = malloc(size + 1), name[32];
	size_t i, n;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	cmdline_init(s);
	if (strlen(cmdline_get()) > CMDLINE_MAX - 1 || strncmp(cmdline_get(), s, CMDLINE_MAX - 1))
		abort();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_value(names[i]);
	/* The input's first few bytes as a name, up to a separator or '='. */
	for (n = 0; n < size && n < sizeof(name) - 1 && s[n] && s[n] != ' ' && s[n] != '='; n++)
		name[n] = s[n];
	name[n] = '\0';
	check_value(name);
	free(s);
	return 0;
}
