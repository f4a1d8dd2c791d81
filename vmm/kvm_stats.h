/* SPDX-License-Identifier: MIT */
/*
 * KVM's binary statistics (KVM_GET_STATS_FD on a VM or vCPU fd): the descriptors and the
 * current values, read in one go. The source of QMP's query-stats.
 */
#ifndef PLUGVM_VMM_KVM_STATS_H
#define PLUGVM_VMM_KVM_STATS_H

#include <stdint.h>

struct kvm_stat {
	const char *name; /* into the set's descriptor block */
	uint32_t flags; /* KVM_STATS_TYPE_*, KVM_STATS_UNIT_*, KVM_STATS_BASE_* */
	int16_t exponent;
	uint16_t size; /* values: 1, or a histogram's buckets */
	uint32_t bucket_size; /* linear histograms */
	const uint64_t *values;
};

struct kvm_stats {
	unsigned n;
	struct kvm_stat *stat;
	void *desc; /* descriptor block (names) */
	uint64_t *data;
};

/*
 * KVM_GET_STATS_FD on a VM or vCPU fd: the statistics fd, or -EOPNOTSUPP / -errno. On a
 * vCPU fd, only while its thread is not in KVM_RUN (the ioctl takes the vCPU's mutex).
 */
int kvm_stats_open(int fd);

/*
 * Read every statistic from `stats_fd` (kvm_stats_open()); any thread, any time. Returns 0
 * (free with kvm_stats_free()) or -errno; descriptors that do not fit their own header's
 * sizes are refused with -EPROTO.
 */
int kvm_stats_read(int stats_fd, struct kvm_stats *out);
void kvm_stats_free(struct kvm_stats *s);

/* The stat named `name`, or NULL. */
const struct kvm_stat *kvm_stats_find(const struct kvm_stats *s, const char *name);

/* QEMU's names: "cumulative", "instant", "peak", "linear-histogram", "log2-histogram". */
const char *kvm_stat_type(const struct kvm_stat *st);
/* "bytes", "seconds", "cycles", "boolean", or NULL for a plain count. */
const char *kvm_stat_unit(const struct kvm_stat *st);
/* 10 or 2 (the base of `exponent`). */
int kvm_stat_base(const struct kvm_stat *st);

#endif
