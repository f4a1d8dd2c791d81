// SPDX-License-Identifier: MIT
/* VMM diagnostics: leveled, prefixed, rate-limited where the guest can trigger them. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static enum log_level current_level = LOG_WARN;
static bool timestamps;
static pthread_mutex_t ratelimit_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level level)
{
	current_level = level;
}

void log_set_timestamps(bool on)
{
	/* glibc reads the time zone file once, on its first conversion: now, not sandboxed. */
	tzset();
	timestamps = on;
}

enum log_level log_get_level(void)
{
	return current_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const tags[] = {
		[LOG_ERROR] = "",
		[LOG_WARN] = "warning: ",
		[LOG_INFO] = "",
		[LOG_DEBUG] = "debug: ",
	};
	char line[1024];
	va_list ap;
	int n = 0;

	if (level > current_level)
		return;
	if (timestamps) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			     tm.tm_sec, ts.tv_nsec / 1000);
	}
	n += snprintf(line + n, sizeof(line) - (size_t)n, "plugvm: %s", tags[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One fputs per line keeps lines from different threads whole. */
	fprintf(stderr, "%s\n", line);
}

bool log_ratelimit_ok(struct log_ratelimit *rl, uint32_t burst)
{
	struct timespec ts;
	uint64_t now;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	pthread_mutex_lock(&ratelimit_lock);
	if (now - rl->window_start_ns >= 1000000000ull) {
		if (rl->suppressed)
			log_warn("%u similar guest warnings suppressed", rl->suppressed);
		rl->window_start_ns = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	ok = rl->printed < burst;
	if (ok)
		rl->printed++;
	else
		rl->suppressed++;
	pthread_mutex_unlock(&ratelimit_lock);
	return ok;
}
