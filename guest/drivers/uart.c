// SPDX-License-Identifier: MIT
/*
 * 16550 console. Transmit: with FIFOs on, THRE means the 16-byte FIFO is empty, so each wait
 * for THRE is followed by one `rep outsb` of up to 16 bytes: under KVM that is two exits per
 * 16 bytes instead of one per byte; each '\n' goes out as "\r\n" inside those 16 (a serial
 * terminal's line end, as Linux's 8250 console writes it). Receive (interrupt-driven, IRQ 4): the handler empties
 * the FIFO into a ring (the boot CPU's IRQ is the only producer) and wakes "ttyS0-rx", the
 * only consumer, which feeds the console monitor.
 */
#include "drivers/uart.h"

#include "arch.h"
#include "drivers/monitor.h"
#include "kernel/errno.h"
#include "kernel/sched.h"
#include "kernel/printk.h"
#include "plugvm_abi.h"

#define COM1	  PLUGVM_PORT_COM1
#define UART_FIFO 16
#define LSR_THRE  0x20
#define LSR_DR	  0x01
#define IER_RDI	  0x01
#define MCR_OUT2  0x08 /* gates the interrupt line on a real 16550 */
#define COM1_IRQ  4 /* ISA IRQ 4: GSI 4 on plugvm and QEMU (no MADT override) */
#define RX_RING	  256 /* a power of two */
#define RX_PRIO	  50

void uart_write_direct(const char *s, size_t n)
{
	while (n) {
		/* One FIFO's worth, on this stack: the NMI path may run here at any time. */
		char fifo[UART_FIFO];
		size_t used, chunk = console_crlf(fifo, sizeof(fifo), s, n, &used);
		unsigned spins = 0;

		/* A missing UART reads 0xff (THRE set): never spin forever on one. */
		while (!(inb(COM1 + 5) & LSR_THRE) && ++spins < 100000)
			__asm__ volatile("pause");
		outsb(COM1, fifo, chunk);
		s += used;
		n -= used;
	}
}

static void uart_write(struct console *con, const char *s, size_t n)
{
	(void)con;
	uart_write_direct(s, n);
}

static struct console uart_console = {
	.name = "ttyS0",
	.write = uart_write,
	.write_atomic = uart_write, /* polled, no lock: the NMI report's path */
};

void uart_console_mute(bool mute)
{
	/* Read by __console_write() under the console lock; one line may race, no harm. */
	__atomic_store_n(&uart_console.enabled, !mute, __ATOMIC_RELEASE);
}

/* 115200 8N1, FIFOs on; the first console, from the arch's console_init() on. */
static void uart_console_init(void)
{
	outb(COM1 + 1, 0x00); /* IER: no interrupts */
	outb(COM1 + 3, 0x80); /* LCR: DLAB */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFOs on, cleared, 14-byte RX trigger */
	outb(COM1 + 4, 0x03); /* DTR, RTS */
	console_register(&uart_console);
}
CONSOLE_INITCALL(uart_console_init);

static uint8_t rx_ring[RX_RING];
static unsigned rx_head, rx_tail; /* head: the IRQ handler's; tail: the thread's */
static unsigned long rx_dropped;
static struct thread *rx_thread;
static struct monitor_line rx_line;

static void uart_irq(unsigned vector, void *arg)
{
	unsigned n = 0;

	(void)vector;
	(void)arg;
	/* Bounded: a broken UART that keeps DR set cannot hold the CPU. */
	while ((inb(COM1 + 5) & LSR_DR) && n++ < 4 * UART_FIFO) {
		uint8_t c = inb(COM1);
		unsigned h = rx_head;

		if (h - __atomic_load_n(&rx_tail, __ATOMIC_ACQUIRE) >= RX_RING) {
			rx_dropped++;
			continue;
		}
		rx_ring[h % RX_RING] = c;
		__atomic_store_n(&rx_head, h + 1, __ATOMIC_RELEASE);
	}
	if (rx_thread)
		thread_wake(rx_thread);
}

static int uart_rx_main(void *arg)
{
	uint8_t chunk[64];

	(void)arg;
	for (;;) {
		unsigned t = rx_tail, h, n = 0;

		thread_prepare_sleep();
		h = __atomic_load_n(&rx_head, __ATOMIC_ACQUIRE);
		if (h == t) {
			thread_sleep();
			continue;
		}
		thread_cancel_sleep();
		while (t != h && n < sizeof(chunk))
			chunk[n++] = rx_ring[t++ % RX_RING];
		__atomic_store_n(&rx_tail, t, __ATOMIC_RELEASE);
		monitor_input(&rx_line, chunk, n);
	}
	return 0;
}

int uart_rx_start(void)
{
	/* No UART at all reads 0xff everywhere. */
	if (inb(COM1 + 5) == 0xff)
		return -ENODEV;
	rx_thread = thread_run("ttyS0-rx", uart_rx_main, NULL, RX_PRIO, THREAD_ANY_CPU);
	if (!rx_thread)
		return -ENOMEM;
	arch_request_irq(COM1_IRQ, false, false, uart_irq, NULL);
	outb(COM1 + 4, 0x03 | MCR_OUT2);
	outb(COM1 + 1, IER_RDI);
	/* Bytes typed before now raised no edge we saw: take them. */
	uart_irq(0, NULL);
	return 0;
}
