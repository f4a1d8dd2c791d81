// SPDX-License-Identifier: MIT
/* printk, a small vsnprintf, and the console list. */
#include "kernel/printk.h"

#include <stdint.h>

#include "kernel/cpu.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"

#define PRINTK_LINE 320

static struct spinlock console_lock = SPINLOCK_INIT("console");
static struct console *consoles;
static int console_owner = -1; /* CPU inside console_write(), for recursion */
bool printk_verbose;

/* The linker's bounds of the table (none in host tests, which link no console driver). */
extern const console_initcall_t __start_console_initcalls[] __attribute__((weak));
extern const console_initcall_t __stop_console_initcalls[] __attribute__((weak));

void console_init(void)
{
	const console_initcall_t *fn;

	for (fn = __start_console_initcalls; fn < __stop_console_initcalls; fn++)
		(*fn)();
}

void console_register(struct console *con)
{
	unsigned long flags = spin_lock_irqsave(&console_lock);

	con->next = consoles;
	con->enabled = true;
	/* Published whole: console_write_atomic() walks the list without the lock. */
	__atomic_store_n(&consoles, con, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&console_lock, flags);
}

static void __console_write(const char *s, size_t n)
{
	struct console *c;

	for (c = consoles; c; c = c->next)
		if (c->enabled)
			c->write(c, s, n);
}

void console_write(const char *s, size_t n)
{
	unsigned long flags;
	int me;

	flags = arch_irq_save();
	me = (int)smp_processor_id();
	if (__atomic_load_n(&console_owner, __ATOMIC_RELAXED) == me) {
		/* Printing from inside the console path (a lock-validator report, say):
		 * taking the lock again would deadlock; write unlocked instead. */
		__console_write(s, n);
		arch_irq_restore(flags);
		return;
	}
	arch_irq_restore(flags);
	flags = spin_lock_irqsave(&console_lock);
	__atomic_store_n(&console_owner, (int)smp_processor_id(), __ATOMIC_RELAXED);
	__console_write(s, n);
	__atomic_store_n(&console_owner, -1, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&console_lock, flags);
}

void console_write_atomic(const char *s, size_t n)
{
	struct console *c;

	/* Consoles are only ever added, at the head: the list is safe to walk unlocked. */
	for (c = __atomic_load_n(&consoles, __ATOMIC_ACQUIRE); c; c = c->next)
		if (c->write_atomic)
			c->write_atomic(c, s, n);
}

/* How long an NMI report waits for a line being printed to end before it writes anyway. */
#define CONSOLE_NMI_WAIT_NS 100000000ull

void console_write_nmi(const char *s, size_t n)
{
	uint64_t until = arch_now_ns() + CONSOLE_NMI_WAIT_NS;
	bool locked = false;

	/*
	 * The raw lock, no validator bookkeeping (NMI context). Not if this CPU is inside
	 * console_write(): the NMI came in the middle of our own line, which it can only split.
	 */
	if (__atomic_load_n(&console_owner, __ATOMIC_RELAXED) != (int)raw_smp_processor_id())
		while (!(locked = __spin_trylock(&console_lock)) && arch_now_ns() < until)
			arch_cpu_relax();
	console_write_atomic(s, n);
	if (locked)
		__spin_unlock(&console_lock);
}

void console_force_unlock(void)
{
	spin_lock_init(&console_lock, "console");
}

size_t console_crlf(char *dst, size_t cap, const char *s, size_t n, size_t *used)
{
	size_t in = 0, out = 0;

	while (in < n && out < cap) {
		size_t run = 0;

		/* The run of bytes before the next LF that fits, copied as one block. */
		while (in + run < n && s[in + run] != '\n' && out + run < cap)
			run++;
		memcpy(dst + out, s + in, run);
		in += run;
		out += run;
		if (in == n || out == cap)
			break;
		if (cap - out < 2)
			break;
		dst[out++] = '\r';
		dst[out++] = '\n';
		in++;
	}
	*used = in;
	return out;
}

/* ---- vsnprintf ------------------------------------------------------------------------ */

struct out {
	char *buf;
	size_t size;
	size_t len; /* would-be length, may exceed size */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
	size_t i;
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left)
		while (fill-- > 0)
			put(o, pad);
	for (i = 0; i < n; i++)
		put(o, s[i]);
	if (left)
		while (fill-- > 0)
			put(o, ' ');
}

/* `prefix` ("-", "0x", ...) goes after space padding and before zero padding, as in C. */
static void put_number(struct out *o, uint64_t v, const char *prefix, unsigned base, bool upper,
		       int width, bool left, char pad, int precision)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, zeros, len, fill;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	zeros = precision > n ? precision - n : 0;
	len = n + zeros + (int)strlen(prefix);
	fill = width > len ? width - len : 0;
	if (!left && pad == ' ')
		while (fill-- > 0)
			put(o, ' ');
	while (*prefix)
		put(o, *prefix++);
	if (!left && pad == '0')
		while (fill-- > 0)
			put(o, '0');
	while (zeros-- > 0)
		put(o, '0');
	while (n > 0)
		put(o, tmp[--n]);
	while (fill-- > 0)
		put(o, ' ');
}

/* A conversion's flags, width, precision and length ("%-08.3lx": left, '0', 8, 3, 1). */
struct conv_spec {
	bool left, alt;
	char pad;
	int width, precision, lng;
};

/* Read the flags, width, precision and length after a '%'; returns where the conversion is. */
static const char *parse_spec(const char *fmt, struct conv_spec *sp, va_list *ap)
{
	*sp = (struct conv_spec){ .pad = ' ', .precision = -1 };
	for (;; fmt++) {
		if (*fmt == '-')
			sp->left = true;
		else if (*fmt == '#')
			sp->alt = true;
		else if (*fmt == '0')
			sp->pad = '0';
		else
			break;
	}
	if (*fmt == '*') {
		sp->width = va_arg(*ap, int);
		fmt++;
	} else {
		while (*fmt >= '0' && *fmt <= '9')
			sp->width = sp->width * 10 + (*fmt++ - '0');
	}
	if (*fmt == '.') {
		fmt++;
		sp->precision = 0;
		if (*fmt == '*') {
			sp->precision = va_arg(*ap, int);
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				sp->precision = sp->precision * 10 + (*fmt++ - '0');
		}
	}
	while (*fmt == 'l' || *fmt == 'z' || *fmt == 'h') {
		if (*fmt != 'h')
			sp->lng++;
		fmt++;
	}
	if (sp->left)
		sp->pad = ' ';
	return fmt;
}

/* Print one conversion `conv` (not '\0'); an unknown one is printed as it was written. */
static void put_conversion(struct out *o, char conv, const struct conv_spec *sp, va_list *ap)
{
	bool upper, neg;
	unsigned base;
	uint64_t v;

	switch (conv) {
	case 'd':
	case 'i': {
		int64_t s = sp->lng ? va_arg(*ap, int64_t) : va_arg(*ap, int);

		neg = s < 0;
		v = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
		put_number(o, v, neg ? "-" : "", 10, false, sp->width, sp->left, sp->pad,
			   sp->precision);
		break;
	}
	case 'u':
	case 'x':
	case 'X':
		base = conv == 'u' ? 10 : 16;
		upper = conv == 'X';
		v = sp->lng ? va_arg(*ap, uint64_t) : va_arg(*ap, unsigned int);
		put_number(o, v, sp->alt && base == 16 && v ? (upper ? "0X" : "0x") : "", base,
			   upper, sp->width, sp->left, sp->pad, sp->precision);
		break;
	case 'p':
		put_number(o, (uint64_t)(uintptr_t)va_arg(*ap, void *), "0x", 16, false, sp->width,
			   sp->left, sp->pad, sp->precision);
		break;
	case 'c': {
		char c = (char)va_arg(*ap, int);

		put_padded(o, &c, 1, sp->width, sp->left, ' ');
		break;
	}
	case 's': {
		const char *s = va_arg(*ap, const char *);

		if (!s)
			s = "(null)";
		put_padded(o, s, sp->precision >= 0 ? strnlen(s, (size_t)sp->precision) : strlen(s),
			   sp->width, sp->left, ' ');
		break;
	}
	case '%':
		put(o, '%');
		break;
	default:
		put(o, '%');
		put(o, conv);
		break;
	}
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	struct conv_spec spec;
	va_list args;

	/* A copy the steps can share by address (a va_list parameter may be an array). */
	va_copy(args, ap);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt = parse_spec(fmt + 1, &spec, &args);
		if (!*fmt)
			break; /* a '%' ending the format prints nothing */
		put_conversion(&o, *fmt, &spec, &args);
	}
	va_end(args);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void vprintk(const char *fmt, va_list ap)
{
	char line[PRINTK_LINE];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n >= (int)sizeof(line)) {
		/* Truncated: keep the line ending so the next message starts a line. */
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	console_write(line, (size_t)n);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}
