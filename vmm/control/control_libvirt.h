/* SPDX-License-Identifier: MIT */
/*
 * The control socket's commands that libvirt's QEMU driver sends a running domain beyond the
 * CPU ones (control_libvirt.c): migration capabilities, query-chardev, qom-list, the empty
 * block and job lists, set-action. control.c merges them into its table.
 */
#ifndef PLUGVM_VMM_CONTROL_LIBVIRT_H
#define PLUGVM_VMM_CONTROL_LIBVIRT_H

#include "qmp.h"

/* Ends with name == NULL; ctx is the struct vm. */
extern const struct qmp_command control_libvirt_commands[];

#endif
