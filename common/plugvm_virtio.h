/* SPDX-License-Identifier: MIT */
/*
 * plugvm's virtio devices: where they are and how a guest finds them. The devices use the
 * virtio-mmio transport, version 2 (virtio 1.x, "modern"), and the register offsets,
 * feature bits and split-ring layouts of Linux's UAPI headers (linux/virtio_mmio.h,
 * virtio_ring.h, virtio_config.h, virtio_console.h); both sides include those.
 *
 * Discovery, as kvmtool and Firecracker do it: the VMM appends one Linux-style
 *
 *     virtio_mmio.device=4K@0xd0000000:16
 *
 * per device (window size, base, GSI) to the guest command line, in slot order, and sets
 * PLUGVM_FEATURE_VIRTIO in the plugvm CPUID leaf. A guest that finds neither keeps using
 * the 16550 (QEMU's `pc` machine has no virtio-mmio devices).
 *
 * Slots (--virtio none turns both off):
 *   0  virtio-console: the console (hvc0). Output, and input from the VMM's stdin.
 *   1  virtio-console: the agent channel (hvc1), fixed-size binary messages, see
 *      plugvm_agent.h.
 *
 * Each device:
 *   - one 4 KiB MMIO window at PLUGVM_VIRTIO_MMIO_BASE + slot * PLUGVM_VIRTIO_MMIO_STRIDE;
 *   - its interrupt on IOAPIC pin PLUGVM_VIRTIO_GSI_BASE + slot, level-triggered, active
 *     high: asserted while InterruptStatus is not zero, dropped by the InterruptACK write
 *     that clears it (the SCI's model);
 *   - features offered: VIRTIO_F_VERSION_1 only (no legacy interface, no indirect
 *     descriptors, no event index, no multiport). FEATURES_OK stays clear if the driver
 *     accepts anything else or not VERSION_1;
 *   - two queues (receiveq 0: host to guest, transmitq 1: guest to host), each at most
 *     PLUGVM_VIRTIO_QUEUE_MAX entries (a power of two), rings in guest RAM;
 *   - every descriptor is checked (buffer inside guest RAM, direction, chain at most the
 *     queue size, no loop, no INDIRECT); a ring that breaks a rule sets
 *     VIRTIO_CONFIG_S_NEEDS_RESET, raises the configuration-change interrupt and stops the
 *     device until the driver resets it (Status = 0), as the virtio spec says.
 *   - transmitq is processed synchronously on the QueueNotify write: when that write
 *     returns, the VMM consumed the buffers and put them on the used ring.
 */
#ifndef PLUGVM_COMMON_VIRTIO_H
#define PLUGVM_COMMON_VIRTIO_H

#define PLUGVM_VIRTIO_MMIO_BASE	  0xd0000000u
#define PLUGVM_VIRTIO_MMIO_STRIDE 0x1000u
#define PLUGVM_VIRTIO_MMIO_SIZE	  0x1000u
#define PLUGVM_VIRTIO_GSI_BASE	  16u
#define PLUGVM_VIRTIO_MAX_DEVICES 8u
#define PLUGVM_VIRTIO_QUEUE_MAX	  256u

#define PLUGVM_VIRTIO_SLOT_CONSOLE 0u
#define PLUGVM_VIRTIO_SLOT_AGENT   1u

#define PLUGVM_VIRTIO_RXQ 0u /* receiveq: host to guest */
#define PLUGVM_VIRTIO_TXQ 1u /* transmitq: guest to host */

#endif
