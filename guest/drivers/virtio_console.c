// SPDX-License-Identifier: MIT
/*
 * virtio-console as the console (see virtio_console.h). Output: console writes (console
 * lock held, interrupts off, any CPU) go through a virtio_tx pool; a panic, or a device
 * that asks for a reset, sends them to the 16550 instead. Input: receive buffers are
 * read by the "vcon" thread, woken by the device interrupt, which also re-initialises the
 * device after VIRTIO_CONFIG_S_NEEDS_RESET.
 */
#include "drivers/virtio_console.h"

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "arch.h"
#include "drivers/monitor.h"
#include "drivers/uart.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/hrtimer.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "plugvm_virtio.h"

CMDLINE_PARAM(virtio_console, .name = "virtio_console", .kind = CMDLINE_ENUM,
	      .choices = "on|off|1|0|yes|no");

#define TX_BUFS	    16
#define TX_BUF_SIZE 512 /* a printk line is at most 320 bytes */
#define TX_WAIT_NS  20000000ull /* 20 ms for a buffer before giving up on the device */
#define RX_BUFS	    8
#define RX_BUF_SIZE 128
#define VCON_PRIO   50

static struct virtio_dev *dev;
static struct virtio_tx tx;
static bool active; /* registered as the console, not fallen back */
static struct virtio_wait waiter;
static int reinit_asked; /* virtio_console_recover(): set the device up again */
static unsigned long reinits; /* set-ups done by the "vcon" thread since boot */

/* The "vcon" thread only: */
static struct virtio_rx rx;
static struct monitor_line mon;

unsigned long virtio_console_kicks(void)
{
	return READ_ONCE(tx.kicks);
}

/* Give up on the device for output: the 16550 takes over again, for good. */
static void fall_back(const char *why, int err)
{
	char msg[96];
	int n;

	WRITE_ONCE(active, false);
	uart_console_mute(false);
	/* No printk here: this runs inside the console path. */
	n = snprintf(msg, sizeof(msg), "warning: virtio-console: %s (%d): back to the 16550\n", why,
		     err);
	uart_write_direct(msg, (size_t)(n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1));
}

/*
 * Each '\n' goes out as "\r\n" (Linux's hvc console does the same); a printk line (at most
 * 320 bytes) fits one transmit buffer with its line ends, so a line still costs one kick.
 */
static void vcon_write(struct console *con, const char *s, size_t n)
{
	while (n) {
		char buf[TX_BUF_SIZE];
		size_t used, out;
		int err;

		/* A panic may have stopped a CPU inside the tx lock: the 16550 needs no lock. */
		if (panic_in_progress() || !READ_ONCE(active)) {
			uart_write_direct(s, n);
			return;
		}
		out = console_crlf(buf, sizeof(buf), s, n, &used);
		err = virtio_tx_send(&tx, buf, out, TX_WAIT_NS);
		if (err) {
			/* Paused (being reset), re-entered, or the device failed: the 16550's. */
			uart_write_direct(s, used);
			if (err == -EIO) {
				virtio_wait_request_reset(&waiter);
			} else if (err == -ETIMEDOUT) {
				con->enabled = false;
				fall_back("the device stopped consuming output", err);
			}
		}
		s += used;
		n -= used;
	}
}

static struct console vcon_console = { .name = "hvc0", .write = vcon_write };

static bool option_off(void)
{
	size_t len;
	const char *v = cmdline_value("virtio_console", &len);

	return v && ((len == 3 && !memcmp(v, "off", 3)) || (len == 1 && v[0] == '0') ||
		     (len == 2 && !memcmp(v, "no", 2)));
}

bool virtio_console_init(void)
{
	if (option_off())
		return false;
	dev = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_CONSOLE, VIRTIO_ID_CONSOLE);
	if (!dev)
		return false;
	if (virtio_tx_init(&tx, "vcon_tx", dev, PLUGVM_VIRTIO_TXQ, TX_BUFS, TX_BUF_SIZE) ||
	    virtio_dev_start(dev, &tx)) {
		pr_warn("virtio-console: cannot start: the 16550 stays the console\n");
		dev = NULL;
		return false;
	}
	virtio_dev_set_irq(dev, virtio_wait_irq, &waiter);
	WRITE_ONCE(active, true);
	console_register(&vcon_console);
	uart_console_mute(true);
	pr_debug("virtio-console: the console is hvc0 (virtio-mmio at %#lx, GSI %u)\n",
		 (unsigned long)dev->base, dev->gsi);
	return true;
}

bool virtio_console_active(void)
{
	return dev && READ_ONCE(active);
}

/* After VIRTIO_CONFIG_S_NEEDS_RESET: reset, set up again, repost. "vcon" thread. */
static void vcon_reinit(void)
{
	int err;

	err = virtio_dev_start(dev, &tx);
	if (err) {
		vcon_console.enabled = false;
		fall_back("cannot re-initialise the device", err);
		return;
	}
	virtio_rx_fill(&rx, true);
	__atomic_fetch_add(&reinits, 1, __ATOMIC_RELEASE);
	printk("virtio-console: device reset and re-initialised\n");
}

static int vcon_main(void *arg)
{
	(void)arg;
	for (;;) {
		const uint8_t *p;
		uint32_t len;

		bool reset = virtio_wait_next(&waiter, dev);

		if (!READ_ONCE(active))
			return 0;
		if (reset || __atomic_exchange_n(&reinit_asked, 0, __ATOMIC_ACQ_REL)) {
			vcon_reinit();
			continue;
		}
		while ((p = virtio_rx_get(&rx, &len)))
			monitor_input(&mon, p, len);
		virtio_rx_fill(&rx, false);
	}
	return 0;
}

void virtio_console_start(void)
{
	if (!virtio_console_active())
		return;
	_Static_assert(RX_BUFS * RX_BUF_SIZE <= PAGE_SIZE, "receive buffers in one page");
	if (virtio_rx_init(&rx, dev, PLUGVM_VIRTIO_RXQ, RX_BUFS, RX_BUF_SIZE)) {
		pr_warn("virtio-console: no memory for input\n");
		return;
	}
	virtio_rx_fill(&rx, true);
	WRITE_ONCE(waiter.thread, thread_run("vcon", vcon_main, NULL, VCON_PRIO, THREAD_ANY_CPU));
	if (!waiter.thread)
		pr_warn("virtio-console: cannot start the input thread\n");
	else
		pr_debug("virtio-console: input ready (type help)\n");
}

int virtio_console_recover(uint64_t timeout_ns)
{
	unsigned long before = __atomic_load_n(&reinits, __ATOMIC_ACQUIRE);
	uint64_t deadline = arch_now_ns() + timeout_ns;

	if (!READ_ONCE(active))
		return 0;
	__atomic_store_n(&reinit_asked, 1, __ATOMIC_RELEASE);
	virtio_wait_request_reset(&waiter);
	while (__atomic_load_n(&reinits, __ATOMIC_ACQUIRE) == before && READ_ONCE(active)) {
		if (arch_now_ns() >= deadline)
			return -ETIMEDOUT;
		sleep_ns(1000000);
	}
	return 0;
}
