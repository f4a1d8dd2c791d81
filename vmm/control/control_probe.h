/* SPDX-License-Identifier: MIT */
/*
 * What plugvm says about itself over QMP (docs/qmp.md, "Describing plugvm"): the commands
 * libvirt's capabilities probe sends, each answering what is true of plugvm, all without a
 * guest machine; and the names of every event plugvm emits (query-qmp-schema lists them).
 */
#ifndef PLUGVM_VMM_CONTROL_PROBE_H
#define PLUGVM_VMM_CONTROL_PROBE_H

#include "qmp.h"

struct vm;

extern const struct qmp_command control_probe_commands[];

/* Every event name plugvm emits, ending with NULL (qmp_server_set_event_names()). */
extern const char *const control_event_names[];

/*
 * Look at /dev/kvm once, for query-kvm and the vCPU limit in query-machines: the VM's own
 * KVM when it has one, else a probe of the device. During setup, before the sandbox (the
 * main thread then opens no files). Main thread.
 */
void control_probe_init(const struct vm *vm);

#endif
