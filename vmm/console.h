/* SPDX-License-Identifier: MIT */
/*
 * The guest console's output (the VMM's stdout), shared by the 16550 and the virtio console.
 * Devices append to a bounded buffer under a short lock and return at once; a writer thread
 * does the blocking write(2)s. A reader that stalls fills the buffer, and what does not fit
 * is dropped (counted, warned about at a limited rate, and marked in the output once room
 * returns) instead of stalling a vCPU. On a regular file the output stops at
 * CONSOLE_FILE_LIMIT bytes, so a chatty guest cannot fill the disk. docs: README, "Running
 * the VMM".
 */
#ifndef PLUGVM_VMM_CONSOLE_H
#define PLUGVM_VMM_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#define CONSOLE_BUF_BYTES    (1u << 20) /* output waiting for a slow reader */
#define CONSOLE_FILE_LIMIT   (1ull << 30) /* bytes written to a regular file, at most */
#define CONSOLE_EXIT_WAIT_MS 2000 /* console_destroy() waits this long for a slow reader */

struct console;

/*
 * Output to `fd` (not closed here), queued until console_start(). NULL on failure (logged).
 */
struct console *console_create(int fd);

/*
 * Start the writer thread (every signal blocked, in its seccomp sandbox). Once, before any
 * vCPU runs. Returns 0 or -errno (logged).
 */
int console_start(struct console *c);

/*
 * Write what waits (if the writer was started; waiting at most CONSOLE_EXIT_WAIT_MS for a stalled reader, then giving
 * it up), stop the writer and free c. No console_write() may run any more. NULL is fine.
 */
void console_destroy(struct console *c);

/*
 * Queue guest output. Any thread, any lock held: never waits for the reader; bytes that do
 * not fit the buffer are dropped. NULL c drops everything.
 */
void console_write(struct console *c, const void *buf, size_t len);

struct console_stats {
	uint64_t written; /* bytes the fd took */
	uint64_t dropped; /* bytes lost: buffer full, fd failed, or the file limit reached */
	size_t queued; /* bytes waiting now */
};
void console_get_stats(struct console *c, struct console_stats *st);

#endif
