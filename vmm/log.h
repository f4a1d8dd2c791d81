/* SPDX-License-Identifier: MIT */
/*
 * VMM diagnostics on stderr, one line each, prefixed "plugvm: ". Errors are logged once,
 * where the context is richest; callers propagate -errno without logging again.
 */
#ifndef PLUGVM_VMM_LOG_H
#define PLUGVM_VMM_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped. Default LOG_WARN. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/*
 * Start each line with the UTC time as QEMU's -msg timestamp=on does
 * ("2026-12-06T08:30:00.123456Z plugvm: ..."). Before any other thread exists.
 */
void log_set_timestamps(bool on);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Rate limit for warnings a guest can trigger at will: true when the caller may log now.
 * At most `burst` messages per second per state; the rest are counted and reported once
 * the window reopens. Thread-safe.
 */
struct log_ratelimit {
	uint64_t window_start_ns;
	uint32_t printed;
	uint32_t suppressed;
};

bool log_ratelimit_ok(struct log_ratelimit *rl, uint32_t burst);

#define log_guest_warn(rl, ...)                 \
	do {                                    \
		if (log_ratelimit_ok((rl), 10)) \
			log_warn(__VA_ARGS__);  \
	} while (0)

/* The same limit for a diagnostic (-v) a guest can trigger; nothing counted without -v. */
#define log_guest_info(rl, ...)                                                \
	do {                                                                   \
		if (log_get_level() >= LOG_INFO && log_ratelimit_ok((rl), 10)) \
			log_info(__VA_ARGS__);                                 \
	} while (0)

#endif
