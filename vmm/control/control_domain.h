/* SPDX-License-Identifier: MIT */
/*
 * query-plugvm-domain: the VM's configuration as QMP (what `plugctl dumpxml` turns back into
 * a libvirt domain document). docs/qmp.md has the shape.
 */
#ifndef PLUGVM_VMM_CONTROL_DOMAIN_H
#define PLUGVM_VMM_CONTROL_DOMAIN_H

#include "qmp.h"

extern const struct qmp_command control_domain_commands[];

#endif
