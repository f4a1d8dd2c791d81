// SPDX-License-Identifier: MIT
/*
 * selftest=flood (only when named): for flood.ms (default 3000) the guest floods one channel
 * of its VMM, flood.kind, as fast as it can; the host side (tests/integration/test_flood.py)
 * measures how fast plugvm answers QMP meanwhile and how fast SIGTERM ends it. Kinds: the
 * agent channel's transmitq full of 1 MiB buffers of valid events (agent_state,
 * agent_lockdep, agent_hello), of replies to no request (agent_reply) or of garbage with
 * magics in it (agent_garbage); its receiveq posted as 1-byte buffers, notified in a loop
 * (rxq); the virtio console (console) and the 16550 (uart) given whole lines; _OST writes
 * (`rep outsl`, ost), hotplug reports (report) and refused direct starts (direct_start).
 * Once a second it prints its count so far (not for the console kind: it took that device).
 */
#include <linux/virtio_ids.h>

#include "apps/selftest.h"
#include "arch.h"
#include "drivers/agent.h"
#include "drivers/virtio_console.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "plugvm_abi.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

#define FLOOD_KINDS                                                                             \
	"agent_state|agent_lockdep|agent_hello|agent_reply|agent_garbage|rxq|console|uart|ost|" \
	"report|direct_start"

CMDLINE_PARAM(flood_kind, .name = "flood.kind", .kind = CMDLINE_ENUM, .choices = FLOOD_KINDS);
CMDLINE_PARAM(flood_ms, .name = "flood.ms", .kind = CMDLINE_UINT, .min = 1, .max = 3600000);

enum flood_kind {
	F_AGENT_STATE,
	F_AGENT_LOCKDEP,
	F_AGENT_HELLO,
	F_AGENT_REPLY,
	F_AGENT_GARBAGE,
	F_RXQ,
	F_CONSOLE,
	F_UART,
	F_OST,
	F_REPORT,
	F_DIRECT_START,
	F_NR,
};

static const char *const kind_names[F_NR] = {
	[F_AGENT_STATE] = "agent_state",
	[F_AGENT_LOCKDEP] = "agent_lockdep",
	[F_AGENT_HELLO] = "agent_hello",
	[F_AGENT_REPLY] = "agent_reply",
	[F_AGENT_GARBAGE] = "agent_garbage",
	[F_RXQ] = "rxq",
	[F_CONSOLE] = "console",
	[F_UART] = "uart",
	[F_OST] = "ost",
	[F_REPORT] = "report",
	[F_DIRECT_START] = "direct_start",
};

#define BUF_PAGES 256 /* one 1 MiB buffer, posted in every descriptor of a ring */
#define BUF_BYTES (BUF_PAGES * 4096u)
#define LINE	  "flood: 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\n"

struct flood {
	enum flood_kind kind;
	uint8_t *buf; /* identity-mapped: its address is its guest-physical address */
	uint32_t len; /* bytes of buf each operation posts or writes */
	struct virtio_dev *dev;
	uint32_t rng;
	unsigned long ops;
};

static void fill_msgs(struct flood *f)
{
	struct plugvm_agent_msg *m = (struct plugvm_agent_msg *)f->buf;
	unsigned i, n = BUF_BYTES / sizeof(*m);

	memset(&m[0], 0, sizeof(m[0]));
	m[0].hdr.magic = PLUGVM_AGENT_MAGIC;
	m[0].hdr.version = PLUGVM_AGENT_VERSION;
	m[0].hdr.flags = PLUGVM_AGENT_F_EVENT;
	if (f->kind == F_AGENT_STATE) {
		struct plugvm_agent_ev_state e = { .cpu = 0, .state = 1, .up = 1 };

		m[0].hdr.type = PLUGVM_AGENT_EV_STATE;
		m[0].hdr.len = sizeof(e);
		memcpy(m[0].payload, &e, sizeof(e));
	} else if (f->kind == F_AGENT_LOCKDEP) {
		struct plugvm_agent_ev_lockdep e = { .type = 0, .cpu = 0 };

		memcpy(e.lock, "flood_lock_a", 13);
		memcpy(e.held, "flood_lock_b", 13);
		m[0].hdr.type = PLUGVM_AGENT_EV_LOCKDEP;
		m[0].hdr.len = sizeof(e);
		memcpy(m[0].payload, &e, sizeof(e));
	} else if (f->kind == F_AGENT_HELLO) {
		struct plugvm_agent_hello h = { .version = PLUGVM_AGENT_VERSION,
						.nr_cpus = 1,
						.nr_states = 1 };

		m[0].hdr.type = PLUGVM_AGENT_HELLO;
		m[0].hdr.len = sizeof(h);
		memcpy(m[0].payload, &h, sizeof(h));
	} else {
		/* A reply to a request id the host never used. */
		m[0].hdr.type = PLUGVM_AGENT_LOCK_STATS;
		m[0].hdr.flags = PLUGVM_AGENT_F_REPLY;
		m[0].hdr.id = 0x7fffffffu;
	}
	for (i = 1; i < n; i++)
		memcpy(&m[i], &m[0], sizeof(m[0]));
}

/* Random bytes, a magic now and then (a frame that must be checked), partial magics. */
static void fill_garbage(struct flood *f)
{
	uint32_t *w = (uint32_t *)f->buf;
	unsigned i;

	for (i = 0; i < BUF_BYTES / 4; i++) {
		uint32_t r = selftest_rand(&f->rng);

		w[i] = r % 64 == 0 ? PLUGVM_AGENT_MAGIC : r % 8 == 0 ? (r & ~0xffu) | 'A' : r;
	}
}

static void fill_lines(struct flood *f)
{
	uint32_t i;

	for (i = 0; i + sizeof(LINE) - 1 <= f->len; i += sizeof(LINE) - 1)
		memcpy(f->buf + i, LINE, sizeof(LINE) - 1);
	f->len = i;
}

/* Every free descriptor of queue q gets the buffer; one notify; take back what is used. */
static void ring_round(struct flood *f, unsigned q, bool device_writes)
{
	struct virtq *vq = &f->dev->vq[q];

	while (virtq_get_used(vq, NULL) >= 0)
		;
	while (virtq_add(vq, f->buf, f->len, device_writes) >= 0)
		f->ops++;
	virtq_kick(f->dev, q);
}

static void one_round(struct flood *f)
{
	uint16_t b = PLUGVM_PORT_CPUHP;

	switch (f->kind) {
	case F_UART:
		outsb(PLUGVM_PORT_COM1, f->buf, f->len);
		f->ops++;
		break;
	case F_OST:
		/* Slot 0, _OST status: each word of the string is one report. */
		outl(b + 0, 0);
		outb(b + 5, 1);
		outl(b + 8, 0x103);
		outb(b + 5, 2);
		outsl(b + 8, f->buf, f->len / 4);
		f->ops += f->len / 4;
		break;
	case F_REPORT:
		outl(PLUGVM_PORT_HOTPLUG_REPORT, (uint32_t)(uintptr_t)f->buf);
		f->ops++;
		break;
	case F_DIRECT_START:
		outl(PLUGVM_PORT_DIRECT_START, (uint32_t)(uintptr_t)f->buf);
		f->ops++;
		break;
	case F_RXQ:
		ring_round(f, PLUGVM_VIRTIO_RXQ, true);
		break;
	default:
		ring_round(f, PLUGVM_VIRTIO_TXQ, false);
		break;
	}
}

/* The buffer and the device for the kind. 0, or selftest_fail()'s value. */
static int setup(struct flood *f)
{
	f->len = BUF_BYTES;
	if (f->kind <= F_RXQ) {
		f->dev = agent_device_claim();
		if (!f->dev)
			return selftest_fail("no agent device");
	} else if (f->kind == F_CONSOLE) {
		f->dev = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_CONSOLE, VIRTIO_ID_CONSOLE);
		if (!f->dev || virtio_dev_init(f->dev, 2))
			return selftest_fail("no virtio console to flood");
	}
	switch (f->kind) {
	case F_AGENT_STATE:
	case F_AGENT_LOCKDEP:
	case F_AGENT_HELLO:
	case F_AGENT_REPLY:
		fill_msgs(f);
		break;
	case F_AGENT_GARBAGE:
		fill_garbage(f);
		break;
	case F_RXQ:
		f->len = 1;
		break;
	case F_CONSOLE:
		fill_lines(f);
		break;
	case F_UART:
		f->len = 4096;
		fill_lines(f);
		break;
	case F_OST:
		f->len = 4096;
		break;
	case F_REPORT: {
		struct plugvm_hotplug_report *r = (struct plugvm_hotplug_report *)f->buf;

		r->apic_id = 0;
		r->op = PLUGVM_HOTPLUG_OP_ONLINE;
		break;
	}
	case F_DIRECT_START: {
		/* An APIC ID beyond every slot: refused (PLUGVM_START_EAPIC), never run. */
		struct plugvm_start_ctx *c = (struct plugvm_start_ctx *)f->buf;

		c->apic_id = 0xfffffu;
		break;
	}
	default:
		break;
	}
	return 0;
}

static enum flood_kind parse_kind(void)
{
	size_t len;
	const char *v = cmdline_value("flood.kind", &len);
	unsigned i;

	for (i = 0; v && i < F_NR; i++)
		if (strlen(kind_names[i]) == len && !strncmp(v, kind_names[i], len))
			return (enum flood_kind)i;
	return F_AGENT_STATE;
}

static int test_flood(void)
{
	struct flood f = { .rng = 1 };
	uint64_t ms = cmdline_uint("flood.ms", 3000), t0, next, deadline, now;
	int ret;

	f.kind = parse_kind();
	f.buf = page_zalloc(BUF_PAGES);
	if (!f.buf)
		return selftest_fail("no memory for the 1 MiB buffer");
	ret = setup(&f);
	if (ret)
		goto out;
	printk("selftest flood: kind=%s ms=%lu: flooding\n", kind_names[f.kind], (unsigned long)ms);
	t0 = arch_now_ns();
	deadline = t0 + ms * 1000000ull;
	next = t0 + 1000000000ull;
	while ((now = arch_now_ns()) < deadline) {
		one_round(&f);
		if (now >= next && f.kind != F_CONSOLE) {
			printk("selftest flood: kind=%s ops=%lu after %lu s\n", kind_names[f.kind],
			       f.ops, (unsigned long)((now - t0) / 1000000000ull));
			next = now + 1000000000ull;
		}
	}
	if (f.kind == F_CONSOLE && virtio_console_recover(2000000000ull))
		ret = selftest_fail("the virtio console cannot be set up again afterwards");
	if (f.kind <= F_RXQ && agent_device_release() && !ret)
		ret = selftest_fail("the agent device cannot be set up again afterwards");
	printk("\n");
	selftest_report("kind=%s ms=%lu ops=%lu", kind_names[f.kind],
			(unsigned long)((arch_now_ns() - t0) / 1000000ull), f.ops);
out:
	page_free(f.buf, BUF_PAGES);
	return ret;
}
SELFTEST_EXPLICIT("flood", test_flood);
