// SPDX-License-Identifier: MIT
/* Closing inherited descriptors at start (see fds.h): close_range() over the gaps between
 * the descriptors to keep. */
#include "fds.h"

#include <errno.h>
#include <linux/close_range.h>
#include <stdbool.h>
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
