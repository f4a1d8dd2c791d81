/* SPDX-License-Identifier: MIT */
/*
 * conn_wait_event() matchers for the events that end a vCPU hotplug request, shared by
 * `plugctl cpu add/del` and plugvm-latency's churn.
 */
#ifndef PLUGVM_TOOLS_LIB_EVENTS_H
#define PLUGVM_TOOLS_LIB_EVENTS_H

#include <json-c/json.h>
#include <stdbool.h>

/*
 * True for the guest's ACPI_DEVICE_OST about an insert (source 1) into the slot `arg`
 * names (a decimal string, as the event's info.slot), whatever its status.
 */
bool match_ost(struct json_object *e, void *arg);
/*
 * True for the end of a removal of the CPU whose QOM path is `arg`: DEVICE_DELETED (done)
 * or DEVICE_UNPLUG_GUEST_ERROR (the guest refused).
 */
bool match_removed(struct json_object *e, void *arg);

#endif
