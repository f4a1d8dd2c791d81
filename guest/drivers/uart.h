/* SPDX-License-Identifier: MIT */
/* The 16550 serial console at COM1 (early boot, panics, and every hypervisor). */
#ifndef PLUGVM_DRIVERS_UART_H
#define PLUGVM_DRIVERS_UART_H

#include <stdbool.h>
#include <stddef.h>

/* Program COM1 (115200 8N1, FIFOs on) and register it as a console. */
void uart_console_init(void);

/*
 * Stop (or resume) writing console output to the 16550, for when a faster console took
 * over (virtio-console). Boot CPU or console owner; any context.
 */
void uart_console_mute(bool mute);

/*
 * Write straight to the 16550, whether muted or not: the fallback of another console
 * (panic, broken device). Any context; the caller serializes (console lock, or panic).
 */
void uart_write_direct(const char *s, size_t n);

#endif
