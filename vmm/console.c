// SPDX-License-Identifier: MIT
/*
 * The guest console's output: a ring of CONSOLE_BUF_BYTES that devices append to and one
 * writer thread empties into the fd. Producers never wait for the fd; the writer never
 * holds the lock while it writes, and only it moves `head`, so the bytes it writes stay put.
 */
#include "console.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"

#define WRITE_CHUNK (64u << 10) /* one write(2), about a pipe's worth */

struct console {
	int fd;
	bool is_file; /* a regular file: CONSOLE_FILE_LIMIT applies */
	bool started; /* console_start() ran: the writer exists */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* data for the writer; room or drained for the others */
	/* Guarded by lock: */
	uint8_t *buf;
	size_t head, len;
	uint64_t written, dropped;
	uint64_t unreported; /* dropped since the last marker in the output */
	bool stop; /* console_destroy(): write what waits, then end */
	bool broken; /* the fd failed: everything is dropped from then on */
	bool capped; /* the file limit was reached */
	struct log_ratelimit rl;
};

/* Append to the ring what fits of p[0..n); returns the bytes taken. Lock held. */
static size_t ring_put(struct console *c, const void *p, size_t n)
{
	size_t room = CONSOLE_BUF_BYTES - c->len, tail, first;

	if (n > room)
		n = room;
	tail = (c->head + c->len) % CONSOLE_BUF_BYTES;
	first = CONSOLE_BUF_BYTES - tail < n ? CONSOLE_BUF_BYTES - tail : n;
	memcpy(c->buf + tail, p, first);
	memcpy(c->buf, (const uint8_t *)p + first, n - first);
	c->len += n;
	return n;
}

void console_write(struct console *c, const void *buf, size_t len)
{
	uint64_t dropped = 0;
	size_t took = 0;

	if (!c || !len)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->broken || c->capped || c->stop) {
		c->dropped += len;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (c->unreported) {
		char mark[96];
		/* CR LF, as the guest's own lines end: a serial terminal shows it whole. */
		int n = snprintf(mark, sizeof(mark),
				 "\r\n[plugvm: %llu bytes of guest output dropped: the console "
				 "was not read]\r\n",
				 (unsigned long long)c->unreported);

		/* The gap is shown where it is, once there is room to say so. */
		if (CONSOLE_BUF_BYTES - c->len >= (size_t)n + len) {
			ring_put(c, mark, (size_t)n);
			c->unreported = 0;
		}
	}
	if (!c->unreported)
		took = ring_put(c, buf, len);
	if (took < len) {
		c->dropped += len - took;
		c->unreported += len - took;
		dropped = c->dropped;
	}
	if (took)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (dropped && log_ratelimit_ok(&c->rl, 1))
		log_warn("console: the output is not read fast enough: %llu bytes of guest output "
			 "dropped so far (%u KiB wait at most)",
			 (unsigned long long)dropped, CONSOLE_BUF_BYTES >> 10);
}

/*
 * One write(2) of up to n bytes, waiting for an fd that is non-blocking. The only place
 * the writer can be cancelled (console_destroy() giving up on a stalled reader).
 */
static ssize_t write_some(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	for (;;) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		break;
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return w;
}

static void *writer(void *arg)
{
	struct console *c = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		size_t n;
		ssize_t w;

		while (!c->len && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->len)
			break;
		n = CONSOLE_BUF_BYTES - c->head < c->len ? CONSOLE_BUF_BYTES - c->head : c->len;
		if (n > WRITE_CHUNK)
			n = WRITE_CHUNK;
		if (c->is_file && n > CONSOLE_FILE_LIMIT - c->written)
			n = (size_t)(CONSOLE_FILE_LIMIT - c->written);
		pthread_mutex_unlock(&c->lock);
		w = write_some(c->fd, c->buf + c->head, n);
		pthread_mutex_lock(&c->lock);
		if (w <= 0) {
			/* A closed terminal or a failing file must not stop the guest. */
			c->broken = true;
			c->dropped += c->len;
			c->len = 0;
		} else {
			c->head = (c->head + (size_t)w) % CONSOLE_BUF_BYTES;
			c->len -= (size_t)w;
			c->written += (size_t)w;
		}
		if (c->is_file && c->written >= CONSOLE_FILE_LIMIT && !c->capped) {
			static const char note[] =
			    "\r\n[plugvm: the console output reached its limit "
			    "of 1 GiB in a file: the rest is dropped]\r\n";

			c->capped = true;
			c->dropped += c->len;
			c->len = 0;
			pthread_mutex_unlock(&c->lock);
			write_some(c->fd, (const uint8_t *)note, sizeof(note) - 1);
			log_warn("console: 1 GiB of guest output written to a file: the rest is "
				 "dropped");
			pthread_mutex_lock(&c->lock);
		}
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

struct console *console_create(int fd)
{
	struct console *c = calloc(1, sizeof(*c));
	struct stat st;

	if (!c || !(c->buf = malloc(CONSOLE_BUF_BYTES))) {
		free(c);
		log_error("console: out of memory");
		return NULL;
	}
	c->fd = fd;
	c->is_file = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	return c;
}

int console_start(struct console *c)
{
	sigset_t all, old;
	int err;

	/* Signals are for the main loop's signalfd and the vCPUs' kicks, never for the writer. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = sandbox_start_thread(&c->thread, SANDBOX_CONSOLE, writer, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	c->started = true;
	return 0;
}

void console_destroy(struct console *c)
{
	struct timespec deadline;
	bool stuck = false;
	size_t left;

	if (!c)
		return;
	if (!c->started)
		goto free;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += CONSOLE_EXIT_WAIT_MS / 1000;
	deadline.tv_nsec += (CONSOLE_EXIT_WAIT_MS % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	while (c->len && !stuck)
		stuck = pthread_cond_timedwait(&c->cond, &c->lock, &deadline) == ETIMEDOUT;
	left = stuck ? c->len : 0;
	c->dropped += left;
	pthread_mutex_unlock(&c->lock);
	/* A reader that stalls for good keeps the writer in write(2): end it there. */
	if (stuck) {
		log_warn("console: the output is not read: %zu bytes of guest output dropped at "
			 "exit",
			 left);
		pthread_cancel(c->thread);
	}
	pthread_join(c->thread, NULL);
free:
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->buf);
	free(c);
}

void console_get_stats(struct console *c, struct console_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	st->written = c->written;
	st->dropped = c->dropped;
	st->queued = c->len;
	pthread_mutex_unlock(&c->lock);
}
