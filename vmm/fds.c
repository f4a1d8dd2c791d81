// SPDX-License-Identifier: MIT
/* Closing inherited descriptors at start (see fds.h): close_range() over the gaps between
 * the descriptors to keep. */
#include "fds.h"

#include <errno.h>
#include <linux/close_range.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* close_range(2), or close() one by one up to the descriptor limit where it is missing. */
static int close_from_to(unsigned lo, unsigned hi)
{
	long max;

	if (!close_range(lo, hi, 0))
		return 0;
	if (errno != ENOSYS)
		return -errno;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || (unsigned long)max > 1u << 20)
		max = 1 << 20;
	for (; lo <= hi && lo < (unsigned long)max; lo++)
		close((int)lo);
	return 0;
}

int fds_close_inherited(const int *keep, unsigned nr_keep)
{
	int sorted[FDS_MAX_KEEP];
	unsigned i, j, n = 0, lo = 3;
	int ret;

	if (nr_keep > FDS_MAX_KEEP)
		return -EINVAL;
	/* The kept descriptors above stdio, ascending, each once (insertion sort: a few). */
	for (i = 0; i < nr_keep; i++) {
		bool dup = false;

		if (keep[i] < 3)
			continue;
		for (j = 0; j < n; j++)
			dup |= sorted[j] == keep[i];
		if (dup)
			continue;
		for (j = n++; j && sorted[j - 1] > keep[i]; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = keep[i];
	}
	for (i = 0; i < n; i++) {
		if ((unsigned)sorted[i] > lo && (ret = close_from_to(lo, (unsigned)sorted[i] - 1)))
			return ret;
		lo = (unsigned)sorted[i] + 1;
	}
	return close_from_to(lo, ~0u);
}

/* Whether fd is an open, listening AF_UNIX stream socket. */
static bool is_unix_listener(int fd)
{
	int val = 0;
	socklen_t len = sizeof(val);
	struct sockaddr_storage addr;
	socklen_t alen = sizeof(addr);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) || !val)
		return false;
	len = sizeof(val);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &val, &len) || val != SOCK_STREAM)
		return false;
	return !getsockname(fd, (struct sockaddr *)&addr, &alen) && addr.ss_family == AF_UNIX;
}

int fds_manager_listener(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i]; i++) {
		const char *w;

		/* Each `fd=N` that starts the argument or follows a ',' or a '=' (--qmp=fd=N). */
		for (w = strstr(argv[i], "fd="); w; w = strstr(w + 3, "fd=")) {
			char *end;
			long fd;

			if (w != argv[i] && w[-1] != ',' && w[-1] != '=')
				continue;
			if (w[3] < '0' || w[3] > '9')
				continue;
			errno = 0;
			fd = strtol(w + 3, &end, 10);
			if (errno || (*end && *end != ',') || fd < 3 || fd > INT_MAX)
				continue;
			if (is_unix_listener((int)fd))
				return (int)fd;
		}
	}
	return -1;
}

bool fds_hand_off_failure(int listener, int timeout_ms)
{
	struct pollfd pfd = { .fd = listener, .events = POLLIN };
	int conn;

	if (listener < 0 || poll(&pfd, 1, timeout_ms) != 1 || !(pfd.revents & POLLIN))
		return false;
	conn = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return false;
	close(conn);
	return true;
}
