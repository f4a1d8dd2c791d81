// SPDX-License-Identifier: MIT
/*
 * selftest=hostile (only when named): the guest turns on its VMM. For hostile.ms (default
 * 3000) it writes random and adversarial values, from hostile.seed (default 1), to every
 * port, MMIO register and virtqueue plugvm exposes: the ACPI CPU hotplug block (at the base
 * the driver found, 0xaf00 on pc or 0x0cd8 on q35; selector
 * and command abuse, ejecting the boot CPU, _OST floods), the paravirt report,
 * direct-start and hotplug ports (bad addresses, bad contexts, claims, DONE of any CPU,
 * LISTENs that must be refused), the PM and GPE blocks (GPE0 where the
 * FADT says), the 16550, both
 * virtio-mmio windows (registers, ring addresses, notifies of every queue) and the agent
 * channel (garbage rings, malformed messages). The VMM must survive it; the host side
 * (tests/integration/test_hostile.py) then checks that plugvm answers QMP and hot-adds a
 * CPU. What the guest could only do to itself is left out, so that it lives to report:
 * isa-debug-exit and S5 (SLP_EN) end the VM by design, a valid direct start of a running
 * CPU would hijack it, as would a LISTEN plugvm accepts (the driver's notification moved
 * elsewhere), and device-writable buffers only ever point at this test's scratch
 * pages or outside RAM (the VMM would otherwise write into the kernel for us). Run it with
 * one CPU: ejects of other present CPUs are the guest's business. Afterwards the 16550,
 * GPE and PM enables are restored, and both virtio devices are set up again by their
 * drivers (the console may also have fallen back to the 16550 meanwhile).
 */
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_cpu_hotplug.h"
#include "drivers/agent.h"
#include "drivers/virtio_console.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "plugvm_abi.h"
#include "plugvm_hotplug.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

CMDLINE_PARAM(hostile_seed, .name = "hostile.seed", .kind = CMDLINE_UINT, .min = 0,
	      .max = 0xffffffffu);
CMDLINE_PARAM(hostile_ms, .name = "hostile.ms", .kind = CMDLINE_UINT, .min = 1, .max = 600000);

#define SCRATCH_PAGES 16
#define SCRATCH_BYTES (SCRATCH_PAGES * 4096u)

enum target {
	T_CPUHP,
	T_REPORT,
	T_START,
	T_HOTPLUG_PV,
	T_PM,
	T_GPE,
	T_UART,
	T_VIRTIO_REGS,
	T_AGENT_RING,
	T_AGENT_MSG,
	T_NR,
};

static const char *const target_names[T_NR] = {
	[T_CPUHP] = "cpuhp",
	[T_REPORT] = "report",
	[T_START] = "start",
	[T_HOTPLUG_PV] = "hotplug_pv",
	[T_PM] = "pm",
	[T_GPE] = "gpe",
	[T_UART] = "uart",
	[T_VIRTIO_REGS] = "virtio_regs",
	[T_AGENT_RING] = "agent_ring",
	[T_AGENT_MSG] = "agent_msg",
};

struct hostile {
	uint32_t rng;
	uint8_t *scratch; /* identity-mapped: its address is its guest-physical address */
	struct virtio_dev *agent; /* claimed from its driver, or NULL */
	struct virtio_dev *con;
	bool ring_dirty; /* hit_agent_ring() wrote the rings: the driver's free list is gone */
	uint16_t cpuhp; /* the CPU hotplug block's base (the machine's: the driver probed it) */
	uint16_t gpe0, gpe0_len; /* GPE0 as the FADT gives it (pc: 0xafe0, 4; q35: 0x620, 16) */
	unsigned long ops[T_NR];
};

static uint32_t rnd(struct hostile *h)
{
	return selftest_rand(&h->rng);
}

static uint64_t rnd64(struct hostile *h)
{
	return (uint64_t)rnd(h) << 32 | rnd(h);
}

/* A value a careless or malicious driver might write: edges, bit patterns, random. */
static uint32_t nasty32(struct hostile *h)
{
	static const uint32_t edges[] = {
		0,     1,      2,	   3,	       0x7f,	   0x80,       0xff,	  0x100,
		0xfff, 0x1000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0xdeadbeef
	};

	return rnd(h) % 3 ? edges[rnd(h) % (sizeof(edges) / sizeof(edges[0]))] : rnd(h);
}

/*
 * A guest-physical address for something the device reads or writes: inside the scratch
 * pages (aligned or not, near their end), or outside RAM. Never the kernel's own memory.
 */
static uint64_t nasty_addr(struct hostile *h)
{
	uint64_t base = (uint64_t)(uintptr_t)h->scratch;

	switch (rnd(h) % 6) {
	case 0:
		return base;
	case 1:
		return base + (rnd(h) % SCRATCH_BYTES);
	case 2:
		return base + SCRATCH_BYTES - 1 - rnd(h) % 64;
	case 3:
		return 0xfffffffffffff000ull + (rnd(h) & 0xfff);
	case 4:
		return (1ull << 40) + rnd(h);
	default:
		return 0xfee00000ull + (rnd(h) & 0xfff); /* the LAPIC's window: not RAM */
	}
}

static void port_write(uint16_t port, unsigned size, uint32_t v)
{
	if (size == 1)
		outb(port, (uint8_t)v);
	else if (size == 2)
		outw(port, (uint16_t)v);
	else
		outl(port, v);
}

static uint32_t port_read(uint16_t port, unsigned size)
{
	return size == 1 ? inb(port) : size == 2 ? inw(port) : inl(port);
}

static unsigned nasty_size(struct hostile *h)
{
	return 1u << (rnd(h) % 3);
}

/* Random accesses to [base, base + len + 2): every register, and a little past the end. */
static void hit_ports(struct hostile *h, uint16_t base, unsigned len,
		      uint32_t (*value)(struct hostile *))
{
	uint16_t port = (uint16_t)(base + rnd(h) % (len + 2));
	unsigned size = nasty_size(h);

	if (rnd(h) % 4 == 0)
		(void)port_read(port, size);
	else
		port_write(port, size, value(h));
}

static void hit_cpuhp(struct hostile *h)
{
	uint16_t b = h->cpuhp;

	switch (rnd(h) % 5) {
	case 0: /* eject the boot CPU: select slot 0, eject (the VMM must refuse) */
		outl(b + 0, 0);
		outb(b + 4, 1u << 3);
		break;
	case 1: /* a selector out of range, then every command and control bit */
		outl(b + 0, nasty32(h));
		outb(b + 5, (uint8_t)nasty32(h));
		outb(b + 4, (uint8_t)nasty32(h));
		break;
	case 2: /* _OST storm on a random slot: event, then status */
		outl(b + 0, rnd(h) % 8);
		outb(b + 5, 1 + rnd(h) % 2);
		outl(b + 8, nasty32(h));
		outb(b + 5, 2);
		outl(b + 8, nasty32(h));
		break;
	default:
		hit_ports(h, b, PLUGVM_PORT_CPUHP_LEN, nasty32);
		break;
	}
}

static bool apic_online(uint32_t apic_id)
{
	unsigned cpu;

	for_each_cpu(cpu, &cpu_online_mask)
		if (cpu_apic_ids[cpu] == apic_id)
			return true;
	return false;
}

/* Scratch contents for the paravirt ports: random, or almost right. */
static uint32_t pv_object(struct hostile *h, size_t len, bool start)
{
	uint64_t off = rnd(h) % (SCRATCH_BYTES - 64);
	uint8_t *p;
	size_t i;

	if (rnd(h) % 4 == 0 && start) {
		/* Not a usable context: misaligned, or not RAM. Never whatever happens to lie
		 * in memory, which could be a valid start of the running CPU. */
		switch (rnd(h) % 3) {
		case 0:
			return (uint32_t)(uintptr_t)h->scratch + 1 + rnd(h) % 7;
		case 1:
			return 0xfee00000u + (rnd(h) & 0xff8);
		default:
			return 0xfffffff8u;
		}
	}
	if (rnd(h) % 4 == 0) /* an address that is not a usable report at all */
		return (uint32_t)nasty_addr(h) | (rnd(h) % 2 ? 0 : rnd(h) % 8);
	off &= ~7ull;
	p = h->scratch + off;
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)rnd(h);
	if (start) {
		struct plugvm_start_ctx *c = (struct plugvm_start_ctx *)p;

		c->apic_id = rnd(h) % 2 ? rnd(h) % 8 : nasty32(h);
		c->entry = rnd(h) % 2 ? nasty_addr(h) : rnd64(h);
		c->stack = nasty_addr(h);
		c->cr3 = nasty_addr(h) & ~0xfffull;
		c->reserved = rnd(h) % 2 ? 0 : rnd64(h);
		/* A valid start of a running CPU would hijack it: keep those contexts bad. */
		if (apic_online(c->apic_id))
			c->reserved = 1;
	} else {
		struct plugvm_hotplug_report *r = (struct plugvm_hotplug_report *)p;

		r->apic_id = rnd(h) % 2 ? rnd(h) % 8 : nasty32(h);
		r->op = rnd(h) % 4;
		r->result = (int32_t)nasty32(h);
		r->reserved = rnd(h) % 3 ? 0 : nasty32(h);
		r->guest_ns = rnd64(h);
	}
	return (uint32_t)(uintptr_t)p + (rnd(h) % 8 == 0 ? 1 + rnd(h) % 3 : 0);
}

static void hit_pv(struct hostile *h, uint16_t port, size_t len, bool start)
{
	uint16_t at = (uint16_t)(port + rnd(h) % 4);
	unsigned size = nasty_size(h);
	/* Odd: never an address a start could be read from (see pv_object()). */
	uint32_t v = nasty32(h) | (start ? 1 : 0);

	if (rnd(h) % 5)
		outl(port, pv_object(h, len, start));
	else if (rnd(h) % 4 == 0)
		(void)port_read(at, size); /* reads, wrong sizes, offsets inside the port */
	else
		port_write(at, size, v);
}

/*
 * plugvm's paravirt hotplug port: claims, DONE of any APIC ID with any op and result, and
 * LISTENs with a vector below 0x20, which plugvm must refuse (an accepted one would move
 * the driver's own notification), from random and almost right commands.
 */
static void hit_hotplug_pv(struct hostile *h)
{
	uint8_t *p = h->scratch + ((rnd(h) % (SCRATCH_BYTES - 64)) & ~7ull);
	struct plugvm_hotplug_cmd *c = (struct plugvm_hotplug_cmd *)p;
	size_t i;

	switch (rnd(h) % 4) {
	case 0:
		(void)inl(PLUGVM_PORT_HOTPLUG_PV); /* a claim: nothing is pending */
		return;
	case 1: /* wrong sizes, offsets inside the port, odd addresses (never a command) */
		if (rnd(h) % 2)
			(void)port_read((uint16_t)(PLUGVM_PORT_HOTPLUG_PV + rnd(h) % 4),
					nasty_size(h));
		else
			port_write((uint16_t)(PLUGVM_PORT_HOTPLUG_PV + rnd(h) % 4), nasty_size(h),
				   nasty32(h) | 1);
		return;
	default:
		break;
	}
	for (i = 0; i < sizeof(*c); i++)
		p[i] = (uint8_t)rnd(h);
	c->cmd = rnd(h) % 2 ? PLUGVM_HOTPLUG_CMD_DONE : rnd(h) % 3;
	c->apic_id = rnd(h) % 2 ? rnd(h) % 8 : nasty32(h);
	c->op = rnd(h) % 4;
	c->result = rnd(h) % 2 ? 0 : (int32_t)nasty32(h);
	if (rnd(h) % 2) {
		c->area = c->vector = c->dest_apic_id = c->reserved = 0;
	}
	/* Whatever else it says, a LISTEN's vector is one plugvm refuses. */
	c->vector = c->cmd == PLUGVM_HOTPLUG_CMD_LISTEN || c->cmd > 2 ? rnd(h) % 0x20 : c->vector;
	outl(PLUGVM_PORT_HOTPLUG_PV, (uint32_t)(uintptr_t)p);
}

/* PM1a: everything but SLP_EN in PM1a_CNT's high byte (that is a power-off). */
static void hit_pm(struct hostile *h)
{
	unsigned off = rnd(h) % (PLUGVM_PORT_PM_LEN + 2), size = nasty_size(h), i;
	uint32_t v = nasty32(h);

	if (rnd(h) % 4 == 0) {
		(void)port_read((uint16_t)(PLUGVM_PORT_PM_BASE + off), size);
		return;
	}
	for (i = 0; i < size; i++)
		if (off + i == 5)
			v &= ~((PLUGVM_PM1_CNT_SLP_EN >> 8) << (8 * i));
	port_write((uint16_t)(PLUGVM_PORT_PM_BASE + off), size, v);
}

/* 16550: never a newline or an escape on the console, so no line is made up. */
static uint32_t uart_value(struct hostile *h)
{
	uint32_t v = nasty32(h), i;

	for (i = 0; i < 4; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));

		if (b == '\n' || b == '\r' || b == 0x1b || b == 0x9b || b == 0)
			v = (v & ~(0xffu << (8 * i))) | ((uint32_t)'.' << (8 * i));
	}
	return v;
}

static void mmio_write(uint64_t addr, unsigned size, uint64_t v)
{
	volatile void *p = (volatile void *)(uintptr_t)addr;

	if (size == 1)
		*(volatile uint8_t *)p = (uint8_t)v;
	else if (size == 2)
		*(volatile uint16_t *)p = (uint16_t)v;
	else if (size == 4)
		*(volatile uint32_t *)p = (uint32_t)v;
	else
		*(volatile uint64_t *)p = v;
}

static uint64_t mmio_read(uint64_t addr, unsigned size)
{
	volatile void *p = (volatile void *)(uintptr_t)addr;

	if (size == 1)
		return *(volatile uint8_t *)p;
	if (size == 2)
		return *(volatile uint16_t *)p;
	if (size == 4)
		return *(volatile uint32_t *)p;
	return *(volatile uint64_t *)p;
}

/* One virtio-mmio register of either device; ring addresses only from nasty_addr(). */
static void hit_virtio_regs(struct hostile *h)
{
	static const uint16_t addr_regs[] = {
		VIRTIO_MMIO_QUEUE_DESC_LOW,  VIRTIO_MMIO_QUEUE_DESC_HIGH,
		VIRTIO_MMIO_QUEUE_AVAIL_LOW, VIRTIO_MMIO_QUEUE_AVAIL_HIGH,
		VIRTIO_MMIO_QUEUE_USED_LOW,  VIRTIO_MMIO_QUEUE_USED_HIGH,
	};
	struct virtio_dev *d = rnd(h) % 2 && h->agent ? h->agent : h->con;
	unsigned size = 1u << (rnd(h) % 4), off, i;
	uint64_t a;

	if (!d)
		return;
	off = rnd(h) % 0x110;
	if (rnd(h) % 3)
		off &= ~3u;
	if (rnd(h) % 4 == 0) {
		(void)mmio_read(d->base + off, size);
		return;
	}
	switch (rnd(h) % 4) {
	case 0: /* a whole ring placed somewhere nasty, made ready and notified */
		mmio_write(d->base + VIRTIO_MMIO_QUEUE_SEL, 4, rnd(h) % 4);
		mmio_write(d->base + VIRTIO_MMIO_QUEUE_NUM, 4, nasty32(h));
		for (i = 0; i < sizeof(addr_regs) / sizeof(addr_regs[0]); i += 2) {
			a = nasty_addr(h);
			mmio_write(d->base + addr_regs[i], 4, (uint32_t)a);
			mmio_write(d->base + addr_regs[i + 1], 4, (uint32_t)(a >> 32));
		}
		mmio_write(d->base + VIRTIO_MMIO_QUEUE_READY, 4, rnd(h) % 3);
		mmio_write(d->base + VIRTIO_MMIO_QUEUE_NOTIFY, 4,
			   rnd(h) % 2 ? rnd(h) % 4 : nasty32(h));
		break;
	case 1: /* status: every bit pattern, including reset and FAILED */
		mmio_write(d->base + VIRTIO_MMIO_STATUS, 4, (uint8_t)rnd(h));
		break;
	default:
		for (i = 0; i < sizeof(addr_regs) / sizeof(addr_regs[0]); i++)
			if (off == addr_regs[i])
				break;
		a = i < sizeof(addr_regs) / sizeof(addr_regs[0]) ? nasty_addr(h) >> (32 * (i & 1))
								 : nasty32(h);
		mmio_write(d->base + off, size, a);
		break;
	}
}

/*
 * Garbage in the agent's rings: descriptors with nasty addresses, lengths, flags and
 * chains (loops, indirect tables of garbage), an avail index far ahead, then a notify.
 */
static void hit_agent_ring(struct hostile *h)
{
	struct virtq *vq;
	unsigned q = rnd(h) % 2, i, n;

	if (!h->agent)
		return;
	if (rnd(h) % 16 == 0 || !h->agent->vq[q].num) {
		virtio_dev_reset(h->agent);
		if (virtio_dev_init(h->agent, 2))
			return;
		h->ring_dirty = false;
	}
	vq = &h->agent->vq[q];
	n = vq->num;
	h->ring_dirty = true;
	for (i = 0; i < 4; i++) {
		struct vring_desc *dsc = &vq->desc[rnd(h) % n];

		dsc->addr = rnd(h) % 4 ? nasty_addr(h) : rnd64(h) | (1ull << 63);
		dsc->len = rnd(h) % 2 ? rnd(h) % 256 : nasty32(h);
		dsc->flags = (uint16_t)(rnd(h) & 7);
		dsc->next = (uint16_t)(rnd(h) % 2 ? rnd(h) % n : rnd(h));
	}
	vq->avail->ring[vq->avail->idx % n] = (uint16_t)(rnd(h) % 2 ? rnd(h) % n : rnd(h));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	vq->avail->idx = (uint16_t)(vq->avail->idx + (rnd(h) % 8 ? 1 : rnd(h)));
	virtq_kick(h->agent, q);
}

/* A malformed agent message on a well-formed ring: header fields and lengths abused. */
static void hit_agent_msg(struct hostile *h)
{
	struct plugvm_agent_hdr *m = (struct plugvm_agent_hdr *)h->scratch;
	struct virtq *vq;
	uint32_t len;
	uint64_t deadline;
	unsigned i;

	if (!h->agent)
		return;
	if (h->ring_dirty || virtio_dev_needs_reset(h->agent) ||
	    !h->agent->vq[PLUGVM_VIRTIO_TXQ].num || rnd(h) % 8 == 0) {
		virtio_dev_reset(h->agent);
		if (virtio_dev_init(h->agent, 2))
			return;
		h->ring_dirty = false;
	}
	vq = &h->agent->vq[PLUGVM_VIRTIO_TXQ];
	for (i = 0; i < PLUGVM_AGENT_MSG_SIZE; i++)
		h->scratch[i] = (uint8_t)rnd(h);
	m->magic = rnd(h) % 4 ? PLUGVM_AGENT_MAGIC : nasty32(h);
	m->version = rnd(h) % 4 ? PLUGVM_AGENT_VERSION : (uint16_t)nasty32(h);
	m->type = (uint16_t)(rnd(h) % 2 ? rnd(h) % 32 : nasty32(h));
	m->flags = (uint16_t)(rnd(h) % 4);
	m->len = rnd(h) % 2 ? rnd(h) % PLUGVM_AGENT_PAYLOAD : nasty32(h);
	len = rnd(h) % 4 ? PLUGVM_AGENT_MSG_SIZE : rnd(h) % (2 * PLUGVM_AGENT_MSG_SIZE);
	if (virtq_add(vq, h->scratch, len ? len : 1, false) < 0)
		return;
	virtq_kick(h->agent, PLUGVM_VIRTIO_TXQ);
	/* Take the buffer back (plugvm consumes on the notify); bounded either way. */
	deadline = arch_now_ns() + 20000000ull;
	while (virtq_get_used(vq, NULL) < 0 && arch_now_ns() < deadline &&
	       !virtio_dev_needs_reset(h->agent))
		arch_cpu_relax();
}

struct saved {
	uint8_t uart_ier, uart_lcr, uart_mcr, uart_dll, uart_dlm;
	uint16_t pm1_en, pm1_cnt;
	uint8_t gpe_en[8]; /* the enable half of GPE0 (2 bytes on pc, 8 on q35) */
};

static void save_state(const struct hostile *h, struct saved *s)
{
	unsigned i;

	s->uart_ier = inb(PLUGVM_PORT_COM1 + 1);
	s->uart_lcr = inb(PLUGVM_PORT_COM1 + 3);
	s->uart_mcr = inb(PLUGVM_PORT_COM1 + 4);
	outb(PLUGVM_PORT_COM1 + 3, s->uart_lcr | 0x80);
	s->uart_dll = inb(PLUGVM_PORT_COM1 + 0);
	s->uart_dlm = inb(PLUGVM_PORT_COM1 + 1);
	outb(PLUGVM_PORT_COM1 + 3, s->uart_lcr);
	s->pm1_en = inw(PLUGVM_PORT_PM1A_EVT + 2);
	s->pm1_cnt = inw(PLUGVM_PORT_PM1A_CNT);
	for (i = 0; i < h->gpe0_len / 2u; i++)
		s->gpe_en[i] = inb((uint16_t)(h->gpe0 + h->gpe0_len / 2u + i));
}

static void restore_state(const struct hostile *h, const struct saved *s)
{
	unsigned i;

	outb(PLUGVM_PORT_COM1 + 3, 0x80);
	outb(PLUGVM_PORT_COM1 + 0, s->uart_dll);
	outb(PLUGVM_PORT_COM1 + 1, s->uart_dlm);
	outb(PLUGVM_PORT_COM1 + 3, s->uart_lcr);
	outb(PLUGVM_PORT_COM1 + 1, s->uart_ier);
	outb(PLUGVM_PORT_COM1 + 2, 0xc7);
	outb(PLUGVM_PORT_COM1 + 4, s->uart_mcr);
	outw(PLUGVM_PORT_PM1A_EVT + 2, s->pm1_en);
	outw(PLUGVM_PORT_PM1A_CNT, (uint16_t)(s->pm1_cnt & ~PLUGVM_PM1_CNT_SLP_EN));
	for (i = 0; i < h->gpe0_len / 2u; i++)
		outb((uint16_t)(h->gpe0 + h->gpe0_len / 2u + i), s->gpe_en[i]);
}

static int test_hostile(void)
{
	struct hostile h = { 0 };
	uint64_t seed = cmdline_uint("hostile.seed", 1), ms = cmdline_uint("hostile.ms", 3000);
	uint64_t t0, deadline, total = 0;
	struct saved saved;
	unsigned long flags;
	char line[160];
	size_t n = 0;
	int ret = 0, i;

	if (cpumask_weight(&cpu_online_mask) != 1)
		return selftest_fail("run it with one CPU online (--smp 1,maxcpus=N)");
	h.rng = (uint32_t)seed ? (uint32_t)seed : 1;
	/* Listening on the paravirt port, the driver never probed the block: probe it here. */
	h.cpuhp =
	    acpi_cpu_hotplug_base() || !acpi_cpu_hotplug_probe() ? acpi_cpu_hotplug_base() : 0;
	h.gpe0 = (uint16_t)acpi_get_info()->gpe0_blk;
	h.gpe0_len = acpi_get_info()->gpe0_blk_len;
	if (!h.cpuhp || !h.gpe0 || h.gpe0_len < 2 || h.gpe0_len > 2 * sizeof(saved.gpe_en))
		return selftest_fail("no CPU hotplug block or GPE0 to hit (block %#x, GPE0 %#x/%u)",
				     h.cpuhp, h.gpe0, h.gpe0_len);
	h.scratch = page_zalloc(SCRATCH_PAGES);
	if (!h.scratch)
		return selftest_fail("no memory for the scratch pages");
	h.con = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_CONSOLE, VIRTIO_ID_CONSOLE);
	h.agent = agent_device_claim();
	save_state(&h, &saved);
	printk("selftest hostile: seed=%lu ms=%lu: random writes to every device from now on\n",
	       (unsigned long)seed, (unsigned long)ms);
	t0 = arch_now_ns();
	deadline = t0 + ms * 1000000ull;
	while (arch_now_ns() < deadline) {
		enum target t = (enum target)(rnd(&h) % T_NR);

		/* No interrupt handler of ours runs between a selector write and its use. */
		flags = arch_irq_save();
		switch (t) {
		case T_CPUHP:
			hit_cpuhp(&h);
			break;
		case T_REPORT:
			hit_pv(&h, PLUGVM_PORT_HOTPLUG_REPORT, sizeof(struct plugvm_hotplug_report),
			       false);
			break;
		case T_START:
			hit_pv(&h, PLUGVM_PORT_DIRECT_START, sizeof(struct plugvm_start_ctx), true);
			break;
		case T_HOTPLUG_PV:
			if (arch_plugvm_feature(PLUGVM_FEATURE_HOTPLUG_PV))
				hit_hotplug_pv(&h);
			break;
		case T_PM:
			hit_pm(&h);
			break;
		case T_GPE:
			hit_ports(&h, h.gpe0, h.gpe0_len, nasty32);
			break;
		case T_UART:
			hit_ports(&h, PLUGVM_PORT_COM1, PLUGVM_PORT_COM1_LEN, uart_value);
			break;
		case T_VIRTIO_REGS:
			hit_virtio_regs(&h);
			break;
		default:
			break;
		}
		arch_irq_restore(flags);
		if (t == T_AGENT_RING)
			hit_agent_ring(&h);
		else if (t == T_AGENT_MSG)
			hit_agent_msg(&h);
		h.ops[t]++;
		total++;
	}
	restore_state(&h, &saved);
	/* The console device's registers were ours too: its driver sets it up again (or it
	 * has fallen back to the 16550) before anything more is printed. */
	if (virtio_console_recover(2000000000ull))
		ret = selftest_fail("the virtio console cannot be set up again afterwards");
	/* A clean line after whatever the 16550 printed. */
	printk("\nselftest hostile: done after %lu operations\n", (unsigned long)total);
	if (h.agent && agent_device_release() && !ret)
		ret = selftest_fail("the agent device cannot be set up again afterwards");
	if (!ret && acpi_cpu_hotplug_probe())
		ret = selftest_fail("the CPU hotplug block no longer answers");
	for (i = 0; i < T_NR; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s=%lu", i ? " " : "",
				      target_names[i], h.ops[i]);
	selftest_report("%s", line);
	selftest_report("seed=%lu ms=%lu ops=%lu agent=%s", (unsigned long)seed,
			(unsigned long)((arch_now_ns() - t0) / 1000000ull), (unsigned long)total,
			h.agent ? "claimed" : "absent");
	return ret;
}
SELFTEST_EXPLICIT("hostile", test_hostile);
