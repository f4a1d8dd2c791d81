// SPDX-License-Identifier: MIT
/*
 * KVM's binary statistics: a header, then descriptors (each followed by its name), then the
 * values, all at offsets the header gives (linux/kvm.h, Documentation/virt/kvm/api.rst 4.133).
 * The values are read afresh (pread) on every read.
 */
#include "kvm_stats.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_DESCS  4096
#define MAX_NAME   256
#define MAX_VALUES (1u << 20) /* 8 MiB of values */

/* All of [off, off + len) from fd, or -errno (-EPROTO if the fd ends early). */
static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPROTO;
		done += (size_t)r;
	}
	return 0;
}

static int parse(int sfd, struct kvm_stats *s)
{
	struct kvm_stats_header h;
	size_t dsize, i;
	uint64_t max_end = 0;
	int ret;

	ret = pread_all(sfd, &h, sizeof(h), 0);
	if (ret)
		return ret;
	if (!h.num_desc || h.num_desc > MAX_DESCS || !h.name_size || h.name_size > MAX_NAME)
		return -EPROTO;
	dsize = sizeof(struct kvm_stats_desc) + h.name_size;
	s->desc = calloc(h.num_desc, dsize);
	s->stat = calloc(h.num_desc, sizeof(*s->stat));
	if (!s->desc || !s->stat)
		return -ENOMEM;
	ret = pread_all(sfd, s->desc, dsize * h.num_desc, h.desc_offset);
	if (ret)
		return ret;
	for (i = 0; i < h.num_desc; i++) {
		struct kvm_stats_desc *d = (void *)((char *)s->desc + i * dsize);
		uint64_t end = (uint64_t)d->offset + (uint64_t)d->size * sizeof(uint64_t);

		d->name[h.name_size - 1] = '\0';
		if (!d->size || d->offset % sizeof(uint64_t) ||
		    end > (uint64_t)MAX_VALUES * sizeof(uint64_t))
			return -EPROTO;
		if (end > max_end)
			max_end = end;
	}
	s->data = calloc(1, (size_t)max_end);
	if (!s->data)
		return -ENOMEM;
	ret = pread_all(sfd, s->data, (size_t)max_end, h.data_offset);
	if (ret)
		return ret;
	for (i = 0; i < h.num_desc; i++) {
		struct kvm_stats_desc *d = (void *)((char *)s->desc + i * dsize);
		struct kvm_stat *st = &s->stat[i];

		st->name = d->name;
		st->flags = d->flags;
		st->exponent = d->exponent;
		st->size = d->size;
		st->bucket_size = d->bucket_size;
		st->values = s->data + d->offset / sizeof(uint64_t);
	}
	s->n = h.num_desc;
	return 0;
}

int kvm_stats_open(int fd)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);

	if (sfd < 0)
		return errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;
	return sfd;
}

int kvm_stats_read(int stats_fd, struct kvm_stats *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (stats_fd < 0)
		return -EOPNOTSUPP;
	ret = parse(stats_fd, out);
	if (ret)
		kvm_stats_free(out);
	return ret;
}

void kvm_stats_free(struct kvm_stats *s)
{
	free(s->stat);
	free(s->desc);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

const struct kvm_stat *kvm_stats_find(const struct kvm_stats *s, const char *name)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->stat[i].name, name))
			return &s->stat[i];
	return NULL;
}

const char *kvm_stat_type(const struct kvm_stat *st)
{
	switch (st->flags & KVM_STATS_TYPE_MASK) {
	case KVM_STATS_TYPE_INSTANT:
		return "instant";
	case KVM_STATS_TYPE_PEAK:
		return "peak";
	case KVM_STATS_TYPE_LINEAR_HIST:
		return "linear-histogram";
	case KVM_STATS_TYPE_LOG_HIST:
		return "log2-histogram";
	default:
		return "cumulative";
	}
}

const char *kvm_stat_unit(const struct kvm_stat *st)
{
	switch (st->flags & KVM_STATS_UNIT_MASK) {
	case KVM_STATS_UNIT_BYTES:
		return "bytes";
	case KVM_STATS_UNIT_SECONDS:
		return "seconds";
	case KVM_STATS_UNIT_CYCLES:
		return "cycles";
	case KVM_STATS_UNIT_BOOLEAN:
		return "boolean";
	default:
		return NULL;
	}
}

int kvm_stat_base(const struct kvm_stat *st)
{
	return (st->flags & KVM_STATS_BASE_MASK) == KVM_STATS_BASE_POW2 ? 2 : 10;
}
