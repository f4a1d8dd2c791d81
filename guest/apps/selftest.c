// SPDX-License-Identifier: MIT
/* The self-test registry and runner (`selftest=NAME[,NAME...]`, `all`, `list`). */
#include "apps/selftest.h"

#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/string.h"

extern const struct selftest __start_selftests[], __stop_selftests[];

static const struct selftest *current;
static char fail_reason[200];

int selftest_fail(const char *fmt, ...)
{
	va_list ap;

	if (!fail_reason[0]) {
		va_start(ap, fmt);
		vsnprintf(fail_reason, sizeof(fail_reason), fmt, ap);
		va_end(ap);
	}
	return -1;
}

void selftest_report(const char *fmt, ...)
{
	char line[240];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printk("selftest %s: %s\n", current ? current->name : "?", line);
}

static bool run_one(const struct selftest *t)
{
	int ret;

	current = t;
	fail_reason[0] = '\0';
	ret = t->fn();
	if (ret == 0 && !fail_reason[0]) {
		printk("selftest %s: pass\n", t->name);
	} else {
		if (!fail_reason[0])
			snprintf(fail_reason, sizeof(fail_reason), "returned %d", ret);
		printk("selftest %s: fail %s\n", t->name, fail_reason);
	}
	current = NULL;
	return ret == 0 && !fail_reason[0];
}

static const struct selftest *find(const char *name, size_t len)
{
	const struct selftest *t;

	for (t = __start_selftests; t < __stop_selftests; t++)
		if (strlen(t->name) == len && !memcmp(t->name, name, len))
			return t;
	return NULL;
}

int selftest_run_cmdline(void)
{
	size_t len, i = 0;
	const char *v = cmdline_value("selftest", &len);
	const struct selftest *t;
	bool ok = true;

	if (!v || !len)
		return -1;
	if (len == 4 && !memcmp(v, "list", 4)) {
		for (t = __start_selftests; t < __stop_selftests; t++)
			printk("selftest list: %s%s\n", t->name,
			       t->explicit_only ? " (not in all)" : "");
		return 0;
	}
	if (len == 3 && !memcmp(v, "all", 3)) {
		for (t = __start_selftests; t < __stop_selftests; t++)
			if (!t->explicit_only)
				ok &= run_one(t);
		return ok ? 0 : 1;
	}
	while (i < len) {
		size_t j = i;

		while (j < len && v[j] != ',')
			j++;
		if (j > i) {
			t = find(v + i, j - i);
			if (t) {
				ok &= run_one(t);
			} else {
				printk(
				    "selftest %.*s: fail unknown test (selftest=list names them)\n",
				    (int)(j - i), v + i);
				ok = false;
			}
		}
		i = j + 1;
	}
	return ok ? 0 : 1;
}
