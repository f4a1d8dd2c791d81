// SPDX-License-Identifier: MIT
/*
 * 16550 console, transmit only. With FIFOs on, THRE means the 16-byte FIFO is empty, so
 * each wait for THRE is followed by one `rep outsb` of up to 16 bytes: under KVM that is
 * two exits per 16 bytes instead of one per byte.
 */
#include "drivers/uart.h"

#include "arch.h"
#include "kernel/printk.h"
#include "plugvm_abi.h"

#define COM1	  PLUGVM_PORT_COM1
#define UART_FIFO 16
#define LSR_THRE  0x20

void uart_write_direct(const char *s, size_t n)
{
	while (n) {
		size_t chunk = n < UART_FIFO ? n : UART_FIFO;
		unsigned spins = 0;

		/* A missing UART reads 0xff (THRE set): never spin forever on one. */
		while (!(inb(COM1 + 5) & LSR_THRE) && ++spins < 100000)
			__asm__ volatile("pause");
		outsb(COM1, s, chunk);
		s += chunk;
		n -= chunk;
	}
}

static void uart_write(struct console *con, const char *s, size_t n)
{
	(void)con;
	uart_write_direct(s, n);
}

static struct console uart_console = { .name = "ttyS0", .write = uart_write };

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
