// SPDX-License-Identifier: MIT
/* The events that end a vCPU hotplug request (see events.h). */
#include <string.h>

#include "events.h"
#include "json_get.h"

bool match_ost(struct json_object *e, void *arg)
{
	struct json_object *info;
	const char *slot;

	if (strcmp(get_str(e, "event", NULL), "ACPI_DEVICE_OST") ||
	    !json_object_object_get_ex(json_object_object_get(e, "data"), "info", &info))
		return false;
	slot = get_str(info, "slot", NULL);
	return slot && get_int(info, "source", NULL) == 1 && !strcmp(slot, (const char *)arg);
}

bool match_removed(struct json_object *e, void *arg)
{
	const char *ev = get_str(e, "event", NULL), *path = get_str(e, "data", "path");

	return ev && path && !strcmp(path, (const char *)arg) &&
	       (!strcmp(ev, "DEVICE_DELETED") || !strcmp(ev, "DEVICE_UNPLUG_GUEST_ERROR"));
}
