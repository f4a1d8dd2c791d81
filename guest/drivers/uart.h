/* SPDX-License-Identifier: MIT */
/* The 16550 serial console at COM1 (early boot, panics, and every hypervisor). */
#ifndef PLUGVM_DRIVERS_UART_H
#define PLUGVM_DRIVERS_UART_H

/* Program COM1 (115200 8N1, FIFOs on) and register it as a console. */
void uart_console_init(void);

#endif
