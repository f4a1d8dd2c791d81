// SPDX-License-Identifier: MIT
/*
 * selftest=flood (only when named): for flood.ms (default 3000) the guest floods one channel
 * of its VMM, flood.kind, as fast as it can; the host side (tests/integration/test_flood.py)
 * measures how fast plugvm answers QMP meanwhile and how fast SIGTERM ends it. Kinds: the
 * agent channel's transmitq full of 1 MiB buffers of valid events (agent_state,
 * agent_lockdep, agent_hello), of replies to no request (agent_reply) or of garbage with
 * magics in it (agent_garbage); its receiveq posted as 1-byte buffers, notified in a loop
 * (rxq); the virtio console (console) and the 16550 (uart) given whole lines; _OST writes
 * (`rep outsl`, ost), hotplug reports (report), refused direct starts (direct_start), and
 * paravirt hotplug DONE commands and claims (pv, plugvm's port 0xaf2c);
 * or all of them in turn, a round each (mix). Once a second it prints its count so far (not
 * for the console and mix kinds: they took that device).
 */
#include <linux/virtio_ids.h>

#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_cpu_hotplug.h"
#include "drivers/agent.h"
#include "drivers/virtio_console.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "plugvm_abi.h"
#include "plugvm_agent.h"
#include "plugvm_hotplug.h"
#include "plugvm_virtio.h"

#define FLOOD_KINDS                                                                             \
	"agent_state|agent_lockdep|agent_hello|agent_reply|agent_garbage|rxq|console|uart|ost|" \
	"report|direct_start|pv|mix"

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
	F_PV,
	F_MIX, /* every kind above in turn */
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
	[F_PV] = "pv",
	[F_MIX] = "mix",
};

#define BUF_PAGES 256 /* a 1 MiB buffer, posted in every descriptor of a ring */
#define BUF_BYTES (BUF_PAGES * 4096u)
#define LINE	  "flood: 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\n"

/* What one kind writes: a buffer (identity-mapped: its address is its guest-physical one). */
struct source {
	uint8_t *buf;
	uint32_t len; /* bytes each operation posts or writes */
	size_t pages;
};

struct flood {
	enum flood_kind kind;
	struct source src[F_MIX];
	struct virtio_dev *agent; /* claimed from its driver, or NULL */
	struct virtio_dev *con; /* taken from its driver, or NULL */
	uint32_t rng;
	unsigned long ops;
};

static void fill_msgs(struct source *s, enum flood_kind kind)
{
	struct plugvm_agent_msg *m = (struct plugvm_agent_msg *)s->buf;
	unsigned i, n = s->len / sizeof(*m);

	memset(&m[0], 0, sizeof(m[0]));
	m[0].hdr.magic = PLUGVM_AGENT_MAGIC;
	m[0].hdr.version = PLUGVM_AGENT_VERSION;
	m[0].hdr.flags = PLUGVM_AGENT_F_EVENT;
	if (kind == F_AGENT_STATE) {
		struct plugvm_agent_ev_state e = { .cpu = 0, .state = 1, .up = 1 };

		m[0].hdr.type = PLUGVM_AGENT_EV_STATE;
		m[0].hdr.len = sizeof(e);
		memcpy(m[0].payload, &e, sizeof(e));
	} else if (kind == F_AGENT_LOCKDEP) {
		struct plugvm_agent_ev_lockdep e = { .type = 0, .cpu = 0 };

		memcpy(e.lock, "flood_lock_a", 13);
		memcpy(e.held, "flood_lock_b", 13);
		m[0].hdr.type = PLUGVM_AGENT_EV_LOCKDEP;
		m[0].hdr.len = sizeof(e);
		memcpy(m[0].payload, &e, sizeof(e));
	} else if (kind == F_AGENT_HELLO) {
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
static void fill_garbage(struct source *s, uint32_t *rng)
{
	uint32_t *w = (uint32_t *)s->buf;
	unsigned i;

	for (i = 0; i < s->len / 4; i++) {
		uint32_t r = selftest_rand(rng);

		w[i] = r % 64 == 0 ? PLUGVM_AGENT_MAGIC : r % 8 == 0 ? (r & ~0xffu) | 'A' : r;
	}
}

static void fill_lines(struct source *s)
{
	uint32_t i;

	for (i = 0; i + sizeof(LINE) - 1 <= s->len; i += sizeof(LINE) - 1)
		memcpy(s->buf + i, LINE, sizeof(LINE) - 1);
	s->len = i;
}

/* Every free descriptor of queue q gets the buffer; one notify; take back what is used. */
static void ring_round(struct flood *f, struct virtio_dev *d, unsigned q, const struct source *s,
		       bool device_writes)
{
	struct virtq *vq = &d->vq[q];

	while (virtq_get_used(vq, NULL) >= 0)
		;
	while (virtq_add(vq, s->buf, s->len, device_writes) >= 0)
		f->ops++;
	virtq_kick(d, q);
}

static void one_round(struct flood *f, enum flood_kind kind)
{
	const struct source *s = &f->src[kind];
	uint16_t b = acpi_cpu_hotplug_base(); /* the machine's block (pc 0xaf00, q35 0x0cd8) */

	switch (kind) {
	case F_UART:
		outsb(PLUGVM_PORT_COM1, s->buf, s->len);
		f->ops++;
		break;
	case F_OST:
		/* Slot 0, _OST status: each word of the string is one report. */
		outl(b + 0, 0);
		outb(b + 5, 1);
		outl(b + 8, 0x103);
		outb(b + 5, 2);
		outsl(b + 8, s->buf, s->len / 4);
		f->ops += s->len / 4;
		break;
	case F_REPORT:
		outl(PLUGVM_PORT_HOTPLUG_REPORT, (uint32_t)(uintptr_t)s->buf);
		f->ops++;
		break;
	case F_DIRECT_START:
		outl(PLUGVM_PORT_DIRECT_START, (uint32_t)(uintptr_t)s->buf);
		f->ops++;
		break;
	case F_PV:
		/* A DONE of CPU 0's insert (an _OST and a report each), then a claim. */
		outl(PLUGVM_PORT_HOTPLUG_PV, (uint32_t)(uintptr_t)s->buf);
		(void)inl(PLUGVM_PORT_HOTPLUG_PV);
		f->ops += 2;
		break;
	case F_RXQ:
		ring_round(f, f->agent, PLUGVM_VIRTIO_RXQ, s, true);
		break;
	case F_CONSOLE:
		ring_round(f, f->con, PLUGVM_VIRTIO_TXQ, s, false);
		break;
	default:
		ring_round(f, f->agent, PLUGVM_VIRTIO_TXQ, s, false);
		break;
	}
}

/* The buffer of one kind. 0, or selftest_fail()'s value. */
static int setup_source(struct flood *f, enum flood_kind kind)
{
	struct source *s = &f->src[kind];
	bool big = kind <= F_AGENT_GARBAGE || kind == F_CONSOLE;

	s->pages = big ? BUF_PAGES : 1;
	s->buf = page_zalloc(s->pages);
	if (!s->buf)
		return selftest_fail("no memory for the %s buffer", kind_names[kind]);
	s->len = big ? BUF_BYTES : 4096;
	switch (kind) {
	case F_AGENT_STATE:
	case F_AGENT_LOCKDEP:
	case F_AGENT_HELLO:
	case F_AGENT_REPLY:
		fill_msgs(s, kind);
		break;
	case F_AGENT_GARBAGE:
		fill_garbage(s, &f->rng);
		break;
	case F_RXQ:
		s->len = 1;
		break;
	case F_CONSOLE:
	case F_UART:
		fill_lines(s);
		break;
	case F_REPORT: {
		struct plugvm_hotplug_report *r = (struct plugvm_hotplug_report *)s->buf;

		r->apic_id = 0;
		r->op = PLUGVM_HOTPLUG_OP_ONLINE;
		break;
	}
	case F_DIRECT_START: {
		/* An APIC ID beyond every slot: refused (PLUGVM_START_EAPIC), never run. */
		struct plugvm_start_ctx *c = (struct plugvm_start_ctx *)s->buf;

		c->apic_id = 0xfffffu;
		break;
	}
	case F_PV: {
		struct plugvm_hotplug_cmd *c = (struct plugvm_hotplug_cmd *)s->buf;

		c->cmd = PLUGVM_HOTPLUG_CMD_DONE;
		c->apic_id = 0;
		c->op = PLUGVM_HOTPLUG_OP_ONLINE;
		break;
	}
	default: /* F_OST: zeros, a status each word */
		break;
	}
	return 0;
}

static bool uses(const struct flood *f, enum flood_kind kind)
{
	return f->kind == kind || f->kind == F_MIX;
}

/* The devices and buffers of f->kind. 0, or selftest_fail()'s value. */
static int setup(struct flood *f)
{
	unsigned k;
	int ret;

	if (f->kind <= F_RXQ || f->kind == F_MIX) {
		f->agent = agent_device_claim();
		if (!f->agent)
			return selftest_fail("no agent device");
	}
	/* Listening on the paravirt port, the driver never probed the block: probe it here. */
	if (uses(f, F_OST) && !acpi_cpu_hotplug_base() && acpi_cpu_hotplug_probe())
		return selftest_fail("no CPU hotplug block to flood with _OST");
	if (uses(f, F_PV) && !arch_plugvm_feature(PLUGVM_FEATURE_HOTPLUG_PV))
		return selftest_fail("no paravirt hotplug port to flood");
	if (uses(f, F_CONSOLE)) {
		f->con = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_CONSOLE, VIRTIO_ID_CONSOLE);
		if (!f->con || virtio_dev_init(f->con, 2))
			return selftest_fail("no virtio console to flood");
	}
	for (k = 0; k < F_MIX; k++) {
		if (!uses(f, (enum flood_kind)k))
			continue;
		ret = setup_source(f, (enum flood_kind)k);
		if (ret)
			return ret;
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
	uint64_t ms = cmdline_uint("flood.ms", 3000), t0 = arch_now_ns(), next, deadline, now;
	enum flood_kind turn = 0;
	unsigned k;
	int ret;

	f.kind = parse_kind();
	ret = setup(&f);
	if (ret)
		goto out;
	printk("selftest flood: kind=%s ms=%lu: flooding\n", kind_names[f.kind], (unsigned long)ms);
	t0 = arch_now_ns();
	deadline = t0 + ms * 1000000ull;
	next = t0 + 1000000000ull;
	while ((now = arch_now_ns()) < deadline) {
		if (f.kind == F_MIX) {
			one_round(&f, turn);
			turn = (enum flood_kind)((turn + 1) % F_MIX);
		} else {
			one_round(&f, f.kind);
		}
		if (now >= next && !f.con) {
			printk("selftest flood: kind=%s ops=%lu after %lu s\n", kind_names[f.kind],
			       f.ops, (unsigned long)((now - t0) / 1000000000ull));
			next = now + 1000000000ull;
		}
	}
out:
	if (f.con && virtio_console_recover(2000000000ull) && !ret)
		ret = selftest_fail("the virtio console cannot be set up again afterwards");
	if (f.agent && agent_device_release() && !ret)
		ret = selftest_fail("the agent device cannot be set up again afterwards");
	if (!ret) {
		printk("\n");
		selftest_report("kind=%s ms=%lu ops=%lu", kind_names[f.kind],
				(unsigned long)((arch_now_ns() - t0) / 1000000ull), f.ops);
	}
	for (k = 0; k < F_MIX; k++)
		if (f.src[k].buf)
			page_free(f.src[k].buf, f.src[k].pages);
	return ret;
}
SELFTEST_EXPLICIT("flood", test_flood);
