// SPDX-License-Identifier: MIT
/* Command-line lookups over one stored copy. Pure: no arch dependency. */
#include "kernel/cmdline.h"

#include "kernel/string.h"

static char line[CMDLINE_MAX];

void cmdline_init(const char *s)
{
	size_t n = strnlen(s, CMDLINE_MAX - 1);

	memcpy(line, s, n);
	line[n] = '\0';
}

const char *cmdline_get(void)
{
	return line;
}

/* One word of the line: name and optional value spans into `line`. */
struct word {
	const char *name;
	size_t name_len;
	const char *value; /* NULL for a bare word */
	size_t value_len;
};

/* Parse the word at or after p into w; returns where the next word starts, or NULL. */
static const char *next_word(const char *p, struct word *w)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return NULL;
	w->name = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '=')
		p++;
	w->name_len = (size_t)(p - w->name);
	w->value = NULL;
	w->value_len = 0;
	if (*p == '=') {
		p++;
		if (*p == '"') {
			w->value = ++p;
			while (*p && *p != '"')
				p++;
			w->value_len = (size_t)(p - w->value);
			if (*p == '"')
				p++;
		} else {
			w->value = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
			w->value_len = (size_t)(p - w->value);
		}
	}
	return p;
}

static bool name_is(const struct word *w, const char *name)
{
	size_t n = strlen(name);

	return w->name_len == n && !memcmp(w->name, name, n);
}

const char *cmdline_value(const char *name, size_t *len)
{
	const char *p = line, *found = NULL;
	struct word w;

	while ((p = next_word(p, &w))) {
		if (name_is(&w, name) && w.value) {
			found = w.value;
			*len = w.value_len;
		}
	}
	return found;
}

bool cmdline_next_value(const char *name, const char **cursor, const char **value, size_t *len)
{
	const char *p = *cursor ? *cursor : line;
	struct word w;

	while ((p = next_word(p, &w))) {
		if (name_is(&w, name) && w.value) {
			*value = w.value;
			*len = w.value_len;
			*cursor = p;
			return true;
		}
	}
	*cursor = line + strlen(line);
	return false;
}

bool cmdline_flag(const char *name)
{
	const char *p = line;
	bool on = false;
	struct word w;

	while ((p = next_word(p, &w))) {
		if (!name_is(&w, name))
			continue;
		on = true;
		if (w.value && ((w.value_len == 1 && w.value[0] == '0') ||
				(w.value_len == 3 && !memcmp(w.value, "off", 3)) ||
				(w.value_len == 2 && !memcmp(w.value, "no", 2))))
			on = false;
	}
	return on;
}

/* Parse a number (decimal or 0x hex) at v[*i], up to len; false if there is no digit. */
static bool parse_num(const char *v, size_t len, size_t *i, uint64_t *out)
{
	uint64_t n = 0, base = 10;
	size_t start;

	if (*i + 2 < len && v[*i] == '0' && (v[*i + 1] == 'x' || v[*i + 1] == 'X')) {
		base = 16;
		*i += 2;
	}
	start = *i;
	for (; *i < len; (*i)++) {
		unsigned d;
		char c = v[*i];

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (n > (UINT64_MAX - d) / base)
			return false;
		n = n * base + d;
	}
	*out = n;
	return *i > start;
}

uint64_t cmdline_uint(const char *name, uint64_t def)
{
	size_t len, i = 0;
	const char *v = cmdline_value(name, &len);
	uint64_t n;

	/* The whole value must be the number. */
	if (!v || !parse_num(v, len, &i, &n) || i != len)
		return def;
	return n;
}

bool cmdline_parse_mmio_device(const char *v, size_t len, uint64_t *size, uint64_t *base,
			       unsigned *irq)
{
	uint64_t sz, b, q, id;
	unsigned shift = 0;
	size_t i = 0;

	if (!parse_num(v, len, &i, &sz))
		return false;
	if (i < len && (v[i] == 'K' || v[i] == 'k'))
		shift = 10;
	else if (i < len && (v[i] == 'M' || v[i] == 'm'))
		shift = 20;
	else if (i < len && (v[i] == 'G' || v[i] == 'g'))
		shift = 30;
	if (shift) {
		if (sz > (UINT64_MAX >> shift))
			return false;
		sz <<= shift;
		i++;
	}
	if (i >= len || v[i++] != '@' || !parse_num(v, len, &i, &b))
		return false;
	if (i >= len || v[i++] != ':' || !parse_num(v, len, &i, &q) || q > 0xffffffffu)
		return false;
	if (i < len && (v[i++] != ':' || !parse_num(v, len, &i, &id)))
		return false;
	if (i != len || !sz || b + sz < b)
		return false;
	*size = sz;
	*base = b;
	*irq = (unsigned)q;
	return true;
}

bool cmdline_list_has(const char *value, size_t len, const char *item)
{
	size_t n = strlen(item), i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && value[j] != ',')
			j++;
		if (j - i == n && !memcmp(value + i, item, n))
			return true;
		i = j + 1;
	}
	return false;
}
