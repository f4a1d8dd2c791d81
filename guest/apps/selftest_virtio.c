// SPDX-License-Identifier: MIT
/*
 * virtio self-tests, only when named (they break the agent device on purpose, or flood
 * the console):
 *   virtio_features  the agent device refuses feature sets it did not offer, then works
 *   virtio_junk      malformed messages and rings from the guest side; each bad ring must
 *                    put the device in NEEDS_RESET, after which it is reset and works
 *   console_flood    console_flood.bytes= (default 1 MiB) of ~100-byte lines, timed
 */
#include <linux/virtio_config.h>
#include <linux/virtio_console.h>

#include "apps/selftest.h"
#include "arch.h"
#include "drivers/agent.h"
#include "drivers/virtio_console.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

CMDLINE_PARAM(flood_bytes, .name = "console_flood.bytes", .kind = CMDLINE_UINT, .min = 1,
	      .max = 1ull << 30);

#define VERSION_1 (1ull << VIRTIO_F_VERSION_1)

/* Give the device back to the agent and check it took it: DRIVER_OK, HELLO sent. */
static int release_checked(struct virtio_dev *d)
{
	int err = agent_device_release();
	uint32_t st = virtio_dev_status(d);

	if (err)
		return selftest_fail("re-initialising the agent device failed (%d, status %#x)",
				     err, st);
	if (!(st & VIRTIO_CONFIG_S_DRIVER_OK) || (st & VIRTIO_CONFIG_S_NEEDS_RESET))
		return selftest_fail("agent device status %#x after re-initialisation", st);
	return 0;
}

/* Offer `features`; true if the device refused them cleanly (FEATURES_OK stays clear). */
static bool refused(struct virtio_dev *d, uint64_t features)
{
	return virtio_dev_negotiate(d, features) &&
	       !(virtio_dev_status(d) & VIRTIO_CONFIG_S_FEATURES_OK);
}

static int test_virtio_features(void)
{
	struct virtio_dev *d = agent_device_claim();
	static const uint64_t extra[] = {
		VERSION_1 | (1ull << VIRTIO_CONSOLE_F_SIZE), /* not offered */
		VERSION_1 | (1ull << VIRTIO_CONSOLE_F_MULTIPORT), /* not offered */
		VERSION_1 | (1ull << 63), /* high word, not offered */
		0, /* no VERSION_1 (a legacy driver) */
		1ull << VIRTIO_CONSOLE_F_SIZE, /* no VERSION_1, something else */
	};
	uint64_t offered;
	unsigned i, nr_refused = 0;
	int ret = 0;

	if (!d)
		return selftest_fail("no agent device (not on plugvm, or --virtio off)");
	offered = virtio_dev_features(d);
	if (!(offered & VERSION_1))
		ret = selftest_fail("the device does not offer VERSION_1 (%#lx)",
				    (unsigned long)offered);
	for (i = 0; i < ARRAY_SIZE(extra) && !ret; i++) {
		if (extra[i] != 0 && (extra[i] & ~offered) == 0)
			continue; /* offered after all: not a test of refusal */
		if (refused(d, extra[i]))
			nr_refused++;
		else
			ret = selftest_fail("features %#lx accepted (offered %#lx)",
					    (unsigned long)extra[i], (unsigned long)offered);
	}
	if (!ret && virtio_dev_negotiate(d, VERSION_1))
		ret = selftest_fail("VERSION_1 alone refused (status %#x)", virtio_dev_status(d));
	if (release_checked(d) && !ret)
		ret = -1;
	if (!ret)
		selftest_report("offered=%#lx refused=%u accepted=1", (unsigned long)offered,
				nr_refused);
	return ret;
}
SELFTEST_EXPLICIT("virtio_features", test_virtio_features);

/* ---- virtio_junk ---------------------------------------------------------------------- */

static uint8_t junk[PLUGVM_AGENT_MSG_SIZE] __aligned(64);

enum bad_ring {
	BAD_OUTSIDE_RAM,
	BAD_LEN_ZERO,
	BAD_LOOP,
	BAD_CHAIN_TOO_LONG,
	BAD_INDIRECT,
	BAD_AVAIL_AHEAD,
	BAD_WRITABLE, /* device-writable buffer on the transmitq */
	BAD_HEAD_RANGE,
	NR_BAD_RINGS,
};

static const char *const bad_names[NR_BAD_RINGS] = {
	"outside-ram", "len-zero",    "loop",	  "chain-too-long",
	"indirect",    "avail-ahead", "writable", "head-range",
};

static void set_desc(struct virtq *vq, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	vq->desc[i].addr = addr;
	vq->desc[i].len = len;
	vq->desc[i].flags = flags;
	vq->desc[i].next = next;
}

/* Post one broken ring on the transmitq of freshly set-up device d. */
static void post_bad(struct virtio_dev *d, enum bad_ring kind)
{
	struct virtq *vq = &d->vq[PLUGVM_VIRTIO_TXQ];
	uint64_t buf = (uint64_t)(uintptr_t)junk;
	unsigned i;

	memset(junk, 0, sizeof(junk));
	switch (kind) {
	case BAD_OUTSIDE_RAM:
		set_desc(vq, 0, 1ull << 40, 64, 0, 0);
		break;
	case BAD_LEN_ZERO:
		set_desc(vq, 0, buf, 0, 0, 0);
		break;
	case BAD_LOOP:
		set_desc(vq, 0, buf, 16, VRING_DESC_F_NEXT, 1);
		set_desc(vq, 1, buf, 16, VRING_DESC_F_NEXT, 0);
		break;
	case BAD_CHAIN_TOO_LONG:
		for (i = 0; i < vq->num; i++)
			set_desc(vq, i, buf, 4, VRING_DESC_F_NEXT, (uint16_t)((i + 1) % vq->num));
		break;
	case BAD_INDIRECT:
		set_desc(vq, 0, buf, 16, VRING_DESC_F_INDIRECT, 0);
		break;
	case BAD_AVAIL_AHEAD:
		set_desc(vq, 0, buf, 16, 0, 0);
		virtq_publish_idx_ahead(d, PLUGVM_VIRTIO_TXQ, (uint16_t)(vq->num + 1));
		return;
	case BAD_WRITABLE:
		set_desc(vq, 0, buf, 16, VRING_DESC_F_WRITE, 0);
		break;
	case BAD_HEAD_RANGE:
		virtq_publish_raw(vq, (uint16_t)(vq->num + 5));
		virtq_kick(d, PLUGVM_VIRTIO_TXQ);
		return;
	default:
		return;
	}
	virtq_publish_raw(vq, 0);
	virtq_kick(d, PLUGVM_VIRTIO_TXQ);
}

/* One malformed message as a well-formed buffer; true if the device consumed it. */
static bool post_bad_msg(struct virtio_dev *d, unsigned kind)
{
	struct plugvm_agent_msg *m = (struct plugvm_agent_msg *)junk;
	struct virtq *vq = &d->vq[PLUGVM_VIRTIO_TXQ];
	uint64_t deadline;
	int id;

	memset(junk, 0, sizeof(junk));
	m->hdr.magic = PLUGVM_AGENT_MAGIC;
	m->hdr.version = PLUGVM_AGENT_VERSION;
	m->hdr.type = PLUGVM_AGENT_HELLO;
	m->hdr.flags = PLUGVM_AGENT_F_EVENT;
	switch (kind) {
	case 0: /* no magic anywhere: the host skips it all */
		memset(junk, 0xa5, sizeof(junk));
		break;
	case 1:
		m->hdr.version = 99;
		break;
	case 2:
		m->hdr.len = PLUGVM_AGENT_MSG_SIZE * 2;
		break;
	case 3: /* a reply of an unknown type */
		m->hdr.type = 0x77;
		m->hdr.flags = PLUGVM_AGENT_F_REPLY;
		m->hdr.id = 12345;
		break;
	case 4: /* an event of an unknown type */
		m->hdr.type = 0x77;
		break;
	case 5: /* neither reply nor event: a request from the guest */
		m->hdr.flags = 0;
		m->hdr.id = 1;
		break;
	default: /* a reply to nothing in flight */
		m->hdr.type = PLUGVM_AGENT_LOCK_STATS;
		m->hdr.flags = PLUGVM_AGENT_F_REPLY;
		m->hdr.id = 0xfffffff0u;
		break;
	}
	if (virtq_add(vq, junk, sizeof(junk), false) < 0)
		return false;
	virtq_kick(d, PLUGVM_VIRTIO_TXQ);
	/* plugvm consumes on the notify; allow a slower device some time anyway. */
	deadline = arch_now_ns() + 100000000ull;
	while ((id = virtq_get_used(vq, NULL)) < 0 && arch_now_ns() < deadline)
		arch_cpu_relax();
	return id >= 0;
}

#define NR_BAD_MSGS 7

static int test_virtio_junk(void)
{
	struct virtio_dev *d = agent_device_claim();
	unsigned k, needs_reset = 0, consumed = 0;
	int ret = 0;

	if (!d)
		return selftest_fail("no agent device (not on plugvm, or --virtio off)");
	for (k = 0; k < NR_BAD_RINGS && !ret; k++) {
		if (virtio_dev_init(d, 2)) {
			ret = selftest_fail("%s: cannot set the device up", bad_names[k]);
			break;
		}
		post_bad(d, (enum bad_ring)k);
		if (virtio_dev_needs_reset(d))
			needs_reset++;
		else
			ret = selftest_fail("%s: no NEEDS_RESET (status %#x)", bad_names[k],
					    virtio_dev_status(d));
		virtio_dev_reset(d);
	}
	if (!ret && virtio_dev_init(d, 2))
		ret = selftest_fail("cannot set the device up for the messages");
	for (k = 0; k < NR_BAD_MSGS && !ret; k++) {
		if (post_bad_msg(d, k))
			consumed++;
		else
			ret = selftest_fail("malformed message %u not consumed", k);
		if (!ret && virtio_dev_needs_reset(d))
			ret = selftest_fail("malformed message %u broke the ring", k);
	}
	if (release_checked(d) && !ret)
		ret = -1;
	if (!ret)
		selftest_report("bad_rings=%u needs_reset=%u bad_messages=%u consumed=%u",
				(unsigned)NR_BAD_RINGS, needs_reset, (unsigned)NR_BAD_MSGS,
				consumed);
	return ret;
}
SELFTEST_EXPLICIT("virtio_junk", test_virtio_junk);

/* ---- console_flood -------------------------------------------------------------------- */

#define FLOOD_LINE 100

static int test_console_flood(void)
{
	uint64_t bytes = cmdline_uint("console_flood.bytes", 1u << 20), sent = 0, t0, ns;
	char text[FLOOD_LINE];
	unsigned i;

	if (!bytes)
		return selftest_fail("console_flood.bytes=0");
	/* "flood 00000000 xxxx...\n": the counter changes in place, no formatting per line. */
	memcpy(text, "flood 00000000 ", 15);
	for (i = 15; i < FLOOD_LINE - 1; i++)
		text[i] = (char)('a' + i % 26);
	text[FLOOD_LINE - 1] = '\n';
	t0 = arch_now_ns();
	while (sent < bytes) {
		size_t n = bytes - sent < FLOOD_LINE ? (size_t)(bytes - sent) : FLOOD_LINE;

		if (n < FLOOD_LINE)
			text[n - 1] = '\n';
		console_write(text, n);
		sent += n;
		for (i = 13; i >= 6; i--) {
			if (text[i] != '9') {
				text[i]++;
				break;
			}
			text[i] = '0';
		}
	}
	ns = arch_now_ns() - t0;
	if (!ns)
		ns = 1;
	selftest_report("bytes=%lu ns=%lu bytes_per_s=%lu console=%s", (unsigned long)bytes,
			(unsigned long)ns, (unsigned long)(bytes * 1000000000ull / ns),
			virtio_console_active() ? "virtio" : "uart");
	return 0;
}
SELFTEST_EXPLICIT("console_flood", test_console_flood);
