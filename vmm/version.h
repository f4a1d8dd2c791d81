/* SPDX-License-Identifier: MIT */
/*
 * plugvm's version (--version, `package` in the QMP greeting and query-version), and the
 * QEMU release whose interface plugvm implements: its QMP and, through plugvm-qemu, its
 * command line. QMP clients (libvirt) read the latter as "the QEMU version" and decide what
 * to send by it; plugvm's own name and version travel in `package` (docs/qmp.md).
 */
#ifndef PLUGVM_VMM_VERSION_H
#define PLUGVM_VMM_VERSION_H

#define PLUGVM_VERSION_MAJOR 0
#define PLUGVM_VERSION_MINOR 2
#define PLUGVM_VERSION_MICRO 0
#define PLUGVM_VERSION	     "0.2.0"

/* QEMU 7.2.0: the machine types are pc-i440fx-7.2 and pc-q35-7.2 (control_probe.c). */
#define PLUGVM_QEMU_COMPAT_MAJOR 7
#define PLUGVM_QEMU_COMPAT_MINOR 2
#define PLUGVM_QEMU_COMPAT_MICRO 0

/* `package` of the greeting and query-version. */
#define PLUGVM_PACKAGE "plugvm " PLUGVM_VERSION

#endif
