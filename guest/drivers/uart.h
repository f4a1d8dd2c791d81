/* SPDX-License-Identifier: MIT */
/*
 * The 16550 serial console at COM1 (early boot, panics, and every hypervisor). Output starts
 * itself: CONSOLE_INITCALL, run by the arch's boot before anything prints; input starts
 * with uart_rx_start().
 */
#ifndef PLUGVM_DRIVERS_UART_H
#define PLUGVM_DRIVERS_UART_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Stop (or resume) writing console output to the 16550, for when a faster console took
 * over (virtio-console). Boot CPU or console owner; any context.
 */
void uart_console_mute(bool mute);

/*
 * Write straight to the 16550, whether muted or not: the fallback of another console
 * (panic, broken device). Each '\n' goes out as "\r\n". Any context; the caller serializes (console lock, or panic).
 */
void uart_write_direct(const char *s, size_t n);

/*
 * Start receiving: typed input (IRQ 4) goes to the console monitor (drivers/monitor.h) on
 * the "ttyS0-rx" thread. Once, from the boot thread after the scheduler runs. 0, -ENODEV
 * (no UART) or -ENOMEM.
 */
int uart_rx_start(void);

#endif
