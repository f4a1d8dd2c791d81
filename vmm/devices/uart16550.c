// SPDX-License-Identifier: MIT
/*
 * A 16550A UART at COM1. Transmit is instantaneous: THR writes go straight to the console's
 * buffer (console.h: never waits for the reader), so LSR always reports THRE|TEMT, and a
 * string write (`rep outsb` of a FIFO's worth) is one append. Receive has a 16550-sized FIFO behind a host ring; bytes beyond
 * the ring overrun (LSR.OE) as on real hardware. IRQ 4 follows IER/IIR semantics.
 */
#include "uart16550.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../console.h"
#include "../log.h"
#include "../vm.h"
#include "plugvm_abi.h"

#define UART_RBR 0 /* read, DLAB=0 */
#define UART_THR 0 /* write, DLAB=0 */
#define UART_IER 1
#define UART_IIR 2 /* read */
#define UART_FCR 2 /* write */
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_MSR 6
#define UART_SCR 7

#define IER_RDI	     0x01
#define IER_THRI     0x02
#define IIR_NO_INT   0x01
#define IIR_THRI     0x02
#define IIR_RDI	     0x04
#define IIR_FIFO     0xc0
#define LCR_DLAB     0x80
#define LSR_DR	     0x01
#define LSR_OE	     0x02
#define LSR_THRE     0x20
#define LSR_TEMT     0x40
#define MCR_LOOP     0x10
#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02

#define RX_RING 4096

struct uart {
	struct vm *vm;
	pthread_mutex_t lock;
	/* Guarded by lock: */
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm, lsr_err;
	int thr_ipending;
	int irq_level;
	uint8_t rx[RX_RING];
	unsigned rx_head, rx_count;
};

/* Caller holds u->lock. */
static uint8_t iir(struct uart *u)
{
	uint8_t fifo = (u->fcr & FCR_ENABLE) ? IIR_FIFO : 0;

	if ((u->ier & IER_RDI) && u->rx_count)
		return fifo | IIR_RDI;
	if ((u->ier & IER_THRI) && u->thr_ipending)
		return fifo | IIR_THRI;
	return fifo | IIR_NO_INT;
}

/* Caller holds u->lock. */
static void update_irq(struct uart *u)
{
	int level = !(iir(u) & IIR_NO_INT);

	if (level != u->irq_level) {
		u->irq_level = level;
		kvm_irq_line(&u->vm->kvm, PLUGVM_IRQ_COM1, level);
	}
}

/* Caller holds u->lock. Never waits for the console's reader. */
static void output(struct uart *u, const uint8_t *p, size_t n)
{
	console_write(u->vm->console, p, n);
}

static uint8_t read_reg(struct uart *u, unsigned reg)
{
	uint8_t v;

	switch (reg) {
	case UART_RBR:
		if (u->lcr & LCR_DLAB)
			return u->dll;
		if (!u->rx_count)
			return 0;
		v = u->rx[u->rx_head];
		u->rx_head = (u->rx_head + 1) % RX_RING;
		u->rx_count--;
		return v;
	case UART_IER:
		return (u->lcr & LCR_DLAB) ? u->dlm : u->ier;
	case UART_IIR:
		v = iir(u);
		/* Reading IIR while it reports THRE acknowledges that interrupt. */
		if ((v & 0x0f) == IIR_THRI)
			u->thr_ipending = 0;
		return v;
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		v = LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0) | u->lsr_err;
		u->lsr_err = 0;
		return v;
	case UART_MSR:
		/* Loopback reflects MCR; otherwise CTS, DSR and DCD are asserted. */
		if (u->mcr & MCR_LOOP)
			return (uint8_t)((u->mcr & 0x0c) << 4 | (u->mcr & 0x01) << 5 |
					 (u->mcr & 0x02) << 3);
		return 0xb0;
	default:
		return u->scr;
	}
}

static void write_reg(struct uart *u, unsigned reg, uint8_t v)
{
	switch (reg) {
	case UART_THR:
		if (u->lcr & LCR_DLAB) {
			u->dll = v;
		} else {
			if (!(u->mcr & MCR_LOOP))
				output(u, &v, 1);
			u->thr_ipending = 1;
		}
		break;
	case UART_IER:
		if (u->lcr & LCR_DLAB) {
			u->dlm = v;
		} else {
			/* Enabling THRI with an empty THR raises it at once (16550 behaviour). */
			if (!(u->ier & IER_THRI) && (v & IER_THRI))
				u->thr_ipending = 1;
			u->ier = v & 0x0f;
		}
		break;
	case UART_FCR:
		u->fcr = v & 0xc9;
		if (v & FCR_CLEAR_RX)
			u->rx_count = 0;
		break;
	case UART_LCR:
		u->lcr = v;
		break;
	case UART_MCR:
		u->mcr = v & 0x1f;
		break;
	case UART_SCR:
		u->scr = v;
		break;
	default:
		break; /* LSR and MSR are read-only */
	}
}

static void uart_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		    unsigned count, bool is_write)
{
	struct uart *u = opaque;
	unsigned i, n = size * count;

	(void)vcpu_id;
	pthread_mutex_lock(&u->lock);
	if (is_write && offset == UART_THR && size == 1 && !(u->lcr & LCR_DLAB) &&
	    !(u->mcr & MCR_LOOP)) {
		/* The fast path: a burst of console bytes in one write. */
		output(u, data, count);
		u->thr_ipending = 1;
	} else {
		/* Wider accesses touch consecutive registers, byte by byte. */
		for (i = 0; i < n; i++) {
			unsigned reg = (unsigned)(offset + (i % size)) & 7;

			if (is_write)
				write_reg(u, reg, data[i]);
			else
				data[i] = read_reg(u, reg);
		}
	}
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

size_t uart_rx(struct vm *vm, const uint8_t *buf, size_t len)
{
	struct uart *u = vm->uart;
	size_t i;

	pthread_mutex_lock(&u->lock);
	for (i = 0; i < len && u->rx_count < RX_RING; i++) {
		u->rx[(u->rx_head + u->rx_count) % RX_RING] = buf[i];
		u->rx_count++;
	}
	if (i < len)
		u->lsr_err |= LSR_OE;
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return i;
}

int uart_init(struct vm *vm)
{
	struct uart *u = calloc(1, sizeof(*u));
	int ret;

	if (!u)
		return -ENOMEM;
	u->vm = vm;
	u->lcr = 0x03; /* 8N1 */
	pthread_mutex_init(&u->lock, NULL);
	ret = bus_register(&vm->pio, PLUGVM_PORT_COM1, PLUGVM_PORT_COM1_LEN, uart_io, u, "com1");
	if (ret) {
		free(u);
		return ret;
	}
	vm->uart = u;
	return 0;
}

void uart_reset(struct vm *vm)
{
	struct uart *u = vm->uart;

	pthread_mutex_lock(&u->lock);
	u->ier = u->mcr = u->scr = u->fcr = u->dll = u->dlm = u->lsr_err = 0;
	u->lcr = 0x03; /* 8N1 */
	u->thr_ipending = 0;
	u->rx_head = u->rx_count = 0;
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

void uart_exit(struct vm *vm)
{
	if (!vm->uart)
		return;
	pthread_mutex_destroy(&vm->uart->lock);
	free(vm->uart);
	vm->uart = NULL;
}
