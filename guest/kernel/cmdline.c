// SPDX-License-Identifier: MIT
/*
 * Command-line lookups over one stored copy, split into words once by cmdline_init(): a
 * lookup walks the word table, never the characters again (guest instructions are dear
 * under kvm_pvm's emulation, and the boot looks words up dozens of times). Pure: no arch
 * dependency.
 */
#include "kernel/cmdline.h"

#include "kernel/printk.h"
#include "kernel/string.h"

static char line[CMDLINE_MAX];

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
	const char *start; /* the whole word, for messages */
	size_t len;
	bool unterminated; /* a quoted value without its closing quote */
};

/* Parse the word at or after p into w; returns where the next word starts, or NULL. */
static const char *next_word(const char *p, struct word *w)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return NULL;
	w->start = p;
	w->unterminated = false;
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
			else
				w->unterminated = true;
		} else {
			w->value = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
			w->value_len = (size_t)(p - w->value);
		}
	}
	w->len = (size_t)(p - w->start);
	return p;
}

/* Every word of `line` in order, parsed once (at most one per two bytes of the line). */
static struct word words[CMDLINE_MAX / 2];
static size_t nr_words;
static size_t line_len;

void cmdline_init(const char *s)
{
	const char *p;

	line_len = strnlen(s, CMDLINE_MAX - 1);
	memcpy(line, s, line_len);
	line[line_len] = '\0';
	nr_words = 0;
	for (p = line;
	     nr_words < sizeof(words) / sizeof(words[0]) && (p = next_word(p, &words[nr_words]));)
		nr_words++;
}

/*
 * Byte by byte to the first difference, without strlen(name): the boot check compares
 * every word with every declared name, and most differ at the first byte. A word's name
 * holds no NUL, so a longer `name` differs at the word's end by its terminator check.
 */
static bool name_is(const struct word *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->name_len; i++)
		if (name[i] != w->name[i])
			return false;
	return name[i] == '\0';
}

const char *cmdline_value(const char *name, size_t *len)
{
	const char *found = NULL;
	size_t i;

	for (i = 0; i < nr_words; i++) {
		if (words[i].value && name_is(&words[i], name)) {
			found = words[i].value;
			*len = words[i].value_len;
		}
	}
	return found;
}

bool cmdline_next_value(const char *name, const char **cursor, const char **value, size_t *len)
{
	const char *from = *cursor ? *cursor : line;
	size_t i;

	for (i = 0; i < nr_words; i++) {
		const struct word *w = &words[i];

		if (w->start < from || !w->value || !name_is(w, name))
			continue;
		*value = w->value;
		*len = w->value_len;
		*cursor = w->start + w->len;
		return true;
	}
	*cursor = line + line_len;
	return false;
}

bool cmdline_flag(const char *name)
{
	bool on = false;
	size_t i;

	for (i = 0; i < nr_words; i++) {
		const struct word *w = &words[i];

		if (!name_is(w, name))
			continue;
		on = true;
		if (w->value && ((w->value_len == 1 && w->value[0] == '0') ||
				 (w->value_len == 3 && !memcmp(w->value, "off", 3)) ||
				 (w->value_len == 2 && !memcmp(w->value, "no", 2))))
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

/* ---- the boot-time check ------------------------------------------------------------------ */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

static bool value_is(const struct word *w, const char *s)
{
	size_t n = strlen(s);

	return w->value_len == n && !memcmp(w->value, s, n);
}

/* Is v (len bytes) one of the '|'-separated choices? */
static bool choice_ok(const char *choices, const char *v, size_t len)
{
	const char *c = choices;

	while (*c) {
		size_t n = 0;

		while (c[n] && c[n] != '|')
			n++;
		if (n == len && !memcmp(c, v, len))
			return true;
		c += n;
		if (*c == '|')
			c++;
	}
	return false;
}

/* Why w's value does not fit p, or NULL if it does. `buf` holds a formatted reason. */
static const char *value_problem(const struct cmdline_param *p, const struct word *w, char *buf,
				 size_t size)
{
	uint64_t n;
	size_t i = 0;

	switch (p->kind) {
	case CMDLINE_FLAG:
		if (!w->value || value_is(w, "0") || value_is(w, "1") || value_is(w, "on") ||
		    value_is(w, "off") || value_is(w, "yes") || value_is(w, "no"))
			return NULL;
		return "is a flag: give it bare or as =0/1/on/off/yes/no";
	case CMDLINE_UINT:
		if (!w->value || !w->value_len)
			return "needs a number";
		if (!parse_num(w->value, w->value_len, &i, &n) || i != w->value_len)
			return "is not a number (decimal or 0x hex)";
		if (n < p->min || n > p->max) {
			snprintf(buf, size, "is out of range %lu..%lu", (unsigned long)p->min,
				 (unsigned long)p->max);
			return buf;
		}
		return NULL;
	case CMDLINE_ENUM:
		if (w->value && choice_ok(p->choices, w->value, w->value_len))
			return NULL;
		snprintf(buf, size, "%s one of %s", w->value ? "is not" : "needs", p->choices);
		return buf;
	case CMDLINE_STRING:
		return w->value && w->value_len ? NULL : "needs a value";
	case CMDLINE_IGNORED:
		return NULL;
	}
	return "has an unknown kind";
}

unsigned cmdline_check(const struct cmdline_param *params, size_t n, cmdline_report_fn report,
		       void *ctx)
{
	unsigned problems = 0;
	char buf[96];
	size_t k;

	for (k = 0; k < nr_words; k++) {
		const struct word w = words[k];
		const struct cmdline_param *param = NULL;
		const char *why = NULL;
		size_t i;
		bool fatal = false;

		for (i = 0; i < w.name_len && name_char(w.name[i]); i++)
			;
		if (!w.name_len || i != w.name_len) {
			why = "cannot be parsed: a name is letters, digits, '_', '.' and '-' "
			      "(quote only the value: name=\"a b\")";
		} else if (w.unterminated) {
			why = "cannot be parsed: its quoted value has no closing quote";
		} else {
			for (i = 0; i < n && !param; i++)
				if (name_is(&w, params[i].name))
					param = &params[i];
			if (!param) {
				why = "is unknown (ignored)";
			} else if ((why = value_problem(param, &w, buf, sizeof(buf)))) {
				fatal = true;
			} else if (!param->repeat && param->kind != CMDLINE_IGNORED) {
				/* A later occurrence of the same name: the last one counts. */
				for (i = k + 1; i < nr_words; i++)
					if (name_is(&words[i], param->name)) {
						why = "is given again later: the last one counts";
						break;
					}
			}
		}
		if (why) {
			problems++;
			report(ctx, fatal, w.start, w.len, why);
		}
	}
	return problems;
}
