/* SPDX-License-Identifier: MIT */
/* plugvm's version: --version, the QMP greeting and query-version. */
#ifndef PLUGVM_VMM_VERSION_H
#define PLUGVM_VMM_VERSION_H

#define PLUGVM_VERSION_MAJOR 0
#define PLUGVM_VERSION_MINOR 2
#define PLUGVM_VERSION_MICRO 0
#define PLUGVM_VERSION	     "0.2.0"

#endif
