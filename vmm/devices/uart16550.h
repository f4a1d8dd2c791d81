/* SPDX-License-Identifier: MIT */
/*
 * The 16550A UART at COM1 (0x3f8, IRQ 4): the early console, panics, and QEMU's console.
 */
#ifndef PLUGVM_VMM_DEVICES_UART16550_H
#define PLUGVM_VMM_DEVICES_UART16550_H

#include <stddef.h>
#include <stdint.h>

struct vm;

/* 16550A UART at COM1 (0x3f8, IRQ 4): output to vm->console; input via uart_rx(). */
int uart_init(struct vm *vm);
void uart_exit(struct vm *vm);
/* Back to power-on state (system_reset): registers, pending input dropped, IRQ low. */
void uart_reset(struct vm *vm);
/* Queue bytes typed on the console for the guest. Returns bytes taken (drops on overrun). */
size_t uart_rx(struct vm *vm, const uint8_t *buf, size_t len);

#endif
