// SPDX-License-Identifier: MIT
/*
 * selftest=load_liar (only when named): the guest lies to plugvm's autoscaler. For
 * load_liar.ms (default 5000) it registers an area of its own (PLUGVM_FEATURE_LOAD) and
 * rewrites every record as fast as it can with lies: busy and wait far beyond the time
 * elapsed or going backwards, now_ns jumping, huge nr_running, sequence counts left odd,
 * HELD on every CPU and garbage flags; every 400 ms it withdraws or re-registers, or
 * sends registrations plugvm must refuse (bad magic, version, count, reserved, an area
 * unaligned or outside RAM), each of which must get a nonzero status. Then it registers
 * the kernel's own area again (drivers/load.c). The host side checks that plugvm
 * survived and kept its vCPUs sane; the guest passes if every bad registration was
 * refused and the real one is accepted again.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "drivers/load.h"
#include "kernel/cmdline.h"
#include "kernel/mm.h"
#include "kernel/printk.h"

CMDLINE_PARAM(load_liar_ms, .name = "load_liar.ms", .kind = CMDLINE_UINT, .min = 1, .max = 600000);

#define LIAR_RECORDS 1024u /* the most a registration may name: at least plugvm's maxcpus */
#define LIAR_PAGES   (LIAR_RECORDS * sizeof(struct plugvm_load_latch) / PAGE_SIZE)
/* How long each registration is lied through: several of plugvm's samples (100 ms). */
#define LIAR_WINDOW_MS 400u

enum bad {
	BAD_MAGIC,
	BAD_VERSION,
	BAD_COUNT_0,
	BAD_COUNT_BIG,
	BAD_RESERVED,
	BAD_UNALIGNED,
	BAD_OUTSIDE,
	BAD_WRAP,
	BAD_NR,
};

struct liar {
	uint32_t rng;
	struct plugvm_load_latch *area;
	struct plugvm_load_register reg __attribute__((aligned(8)));
	unsigned sent, accepted, bad_sent, bad_accepted, withdrawn;
};

static struct liar liar;

static uint64_t rand64(struct liar *l)
{
	return (uint64_t)selftest_rand(&l->rng) << 32 | selftest_rand(&l->rng);
}

/* One registration naming `area` with `count`, made bad as `bad` says (BAD_NR: good). */
static uint32_t send(struct liar *l, uint64_t area_gpa, uint32_t count, enum bad bad)
{
	l->reg = (struct plugvm_load_register){ .magic = PLUGVM_LOAD_MAGIC,
						.version = PLUGVM_LOAD_VERSION,
						.area_gpa = area_gpa,
						.count = count };
	switch (bad) {
	case BAD_MAGIC:
		l->reg.magic ^= 1u << (selftest_rand(&l->rng) % 32);
		break;
	case BAD_VERSION:
		l->reg.version = PLUGVM_LOAD_VERSION + 1 + selftest_rand(&l->rng) % 1000;
		break;
	case BAD_COUNT_0:
		l->reg.count = 0;
		break;
	case BAD_COUNT_BIG:
		l->reg.count = LIAR_RECORDS + 1 + selftest_rand(&l->rng) % 100000;
		break;
	case BAD_RESERVED:
		l->reg.reserved = rand64(l) | 1;
		break;
	case BAD_UNALIGNED:
		l->reg.area_gpa += 8 + 8 * (selftest_rand(&l->rng) % 7);
		break;
	case BAD_OUTSIDE:
		l->reg.area_gpa = 1ull << (40 + selftest_rand(&l->rng) % 8);
		break;
	case BAD_WRAP:
		l->reg.area_gpa = ~0ull - 63; /* 64-byte aligned, and area + size wraps */
		break;
	case BAD_NR:
		break;
	}
	return load_send(&l->reg);
}

/* Every record: lies of a kind chosen per record and pass. */
static void lie(struct liar *l, uint64_t pass)
{
	unsigned i, c;

	for (i = 0; i < LIAR_RECORDS; i++) {
		struct plugvm_load_latch *x = &l->area[i];
		uint32_t r = selftest_rand(&l->rng);

		for (c = 0; c < 2; c++) {
			struct plugvm_load_cpu *p = &x->copy[c];

			p->flags = PLUGVM_LOAD_HELD | (r & 4 ? r : PLUGVM_LOAD_ONLINE);
			p->nr_running = r & 8 ? 0xffffffffu : r % 100000;
			p->now_ns = r & 16 ? rand64(l) : p->now_ns - (r & 0xffff);
			p->busy_ns = r & 32 ? ~0ull - (r & 0xff) : p->busy_ns - (r & 0xfff);
			p->wait_ns = r & 64 ? p->busy_ns + rand64(l) % 1000000000000ull : rand64(l);
		}
		/* Left odd now and then; else any count at all. */
		x->seq = r & 128 ? (uint32_t)(pass * 2 + 1) : selftest_rand(&l->rng);
		x->reserved = r;
	}
}

/* A bad registration of a random kind: it must be refused. */
static void bad_one(struct liar *l)
{
	enum bad b = (enum bad)(selftest_rand(&l->rng) % BAD_NR);

	l->bad_sent++;
	if (send(l, (uint64_t)(uintptr_t)l->area, LIAR_RECORDS, b) == PLUGVM_LOAD_OK) {
		l->bad_accepted++;
		printk("selftest load_liar: bad registration %d accepted\n", (int)b);
	}
}

static int test_load_liar(void)
{
	struct liar *l = &liar;
	uint64_t t0 = arch_now_ns(), ms = cmdline_uint("load_liar.ms", 5000), pass = 0;
	unsigned b;
	uint32_t st;

	if (!arch_plugvm_feature(PLUGVM_FEATURE_LOAD)) {
		selftest_report("no plugvm load port: nothing to lie to");
		return 0;
	}
	l->rng = 0x4c4f4144u;
	l->area = page_zalloc(LIAR_PAGES);
	if (!l->area)
		return selftest_fail("no memory for the fake area");
	for (b = 0; b < BAD_NR; b++) { /* every kind once, then at random */
		l->bad_sent++;
		if (send(l, (uint64_t)(uintptr_t)l->area, LIAR_RECORDS, (enum bad)b) ==
		    PLUGVM_LOAD_OK) {
			l->bad_accepted++;
			printk("selftest load_liar: bad registration %u accepted\n", b);
		}
	}
	while (arch_now_ns() - t0 < ms * 1000000) {
		uint32_t r = selftest_rand(&l->rng) % 8;
		uint64_t window = arch_now_ns();

		/*
		 * Lies under one registration for LIAR_WINDOW_MS, long enough for plugvm to
		 * sample them several times (a new registration restarts its figures), then
		 * one change of registration.
		 */
		do
			lie(l, pass++);
		while (arch_now_ns() - window < LIAR_WINDOW_MS * 1000000ull);
		if (r < 3) {
			l->sent++;
			l->accepted += send(l, (uint64_t)(uintptr_t)l->area, LIAR_RECORDS,
					    BAD_NR) == PLUGVM_LOAD_OK;
		} else if (r == 3) {
			l->withdrawn++;
			send(l, 0, 0, BAD_NR); /* area 0 withdraws */
		} else if (r == 4) {
			bad_one(l);
		}
	}
	st = load_register_again();
	selftest_report("passes=%lu registrations=%u accepted=%u withdrawals=%u bad=%u "
			"bad_accepted=%u restored_status=%u",
			(unsigned long)pass, l->sent, l->accepted, l->withdrawn, l->bad_sent,
			l->bad_accepted, st);
	if (l->bad_accepted)
		return selftest_fail("%u of %u bad registrations were accepted", l->bad_accepted,
				     l->bad_sent);
	if (st != PLUGVM_LOAD_OK)
		return selftest_fail("the kernel's own area was refused again (status %u)", st);
	return 0;
}
SELFTEST_EXPLICIT("load_liar", test_load_liar);
