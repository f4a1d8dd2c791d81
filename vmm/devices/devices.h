/* SPDX-License-Identifier: MIT */
/*
 * The emulated platform devices, one file each, each with an init/exit pair that
 * registers its ranges on the VM's buses. Everything a guest writes is range-checked.
 * The CPU hotplug devices (acpi_cpu_hotplug.h, direct_start.h, hotplug_report.h) have
 * their own headers: cpus.c owns them.
 */
#ifndef PLUGVM_VMM_DEVICES_H
#define PLUGVM_VMM_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/* 16550A UART at COM1 (0x3f8, IRQ 4): output to vm->console; input via uart_rx(). */
int uart_init(struct vm *vm);
void uart_exit(struct vm *vm);
/* Queue bytes typed on the console for the guest. Returns bytes taken (drops on overrun). */
size_t uart_rx(struct vm *vm, const uint8_t *buf, size_t len);

/* QEMU's isa-debug-exit at 0xf4: a write of v stops the VM with status (v << 1) | 1. */
int debug_exit_init(struct vm *vm);

/*
 * ACPI fixed hardware in QEMU `pc` layout: PM1a event/control (S5 power-off), the PM
 * timer, GPE0 and the SCI line (GSI 9, level).
 */
int acpi_pm_init(struct vm *vm);
void acpi_pm_exit(struct vm *vm);
/* Latch GPE0 status bit `bit` and update the SCI. Thread-safe. */
void acpi_pm_raise_gpe(struct vm *vm, unsigned bit);
/* Press the power button (PM1 PWRBTN_STS) and update the SCI. Thread-safe. */
void acpi_pm_power_button(struct vm *vm);

/*
 * virtio-mmio devices (common/plugvm_virtio.h): the virtio console (slot 0) and the agent
 * channel (slot 1), unless cfg->virtio_disabled. vm->virtio stays NULL without them.
 */
int virtio_devices_init(struct vm *vm);
void virtio_devices_exit(struct vm *vm);
/* The guest command-line words that announce the devices (" virtio_mmio.device=..."). */
int virtio_devices_cmdline(const struct vm *vm, char *buf, size_t len);
/* The guest's virtio console takes input (its receiveq is live). Any thread. */
bool virtio_console_live(struct vm *vm);
/* Queue typed bytes for the virtio console. Returns bytes taken (the rest is dropped). */
size_t virtio_console_rx(struct vm *vm, const uint8_t *buf, size_t len);
/* Queue one whole message for the agent channel: 0, -ENODEV, or -EAGAIN when full. */
int virtio_agent_send(struct vm *vm, const void *msg, size_t len);

#endif
