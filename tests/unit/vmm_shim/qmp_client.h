/* SPDX-License-Identifier: MIT */
/*
 * The client's side of the VMM's QMP server in unit tests: a socketless session's next
 * line, or a real socket client that the test drives by letting the server dispatch.
 */
#ifndef PLUGVM_TESTS_UNIT_QMP_CLIENT_H
#define PLUGVM_TESTS_UNIT_QMP_CLIENT_H

#include <json-c/json.h>
#include <stddef.h>

#include "vmm/control/qmp.h"

/* The next CRLF-ended line of a session's output, parsed (the caller puts it); NULL: none. */
struct json_object *qmp_test_next_line(struct qmp_session *c);

/* The client of the socketless session `c` sends `text`. */
void qmp_test_send(struct qmp_session *c, const char *text);

/* A socketless session of `s`, past the greeting and qmp_capabilities. */
struct qmp_session *qmp_test_session(struct qmp_server *s);

/* `s` listens on a fresh path (written to `path`; `tag` in its name; the caller unlinks it). */
void qmp_test_listen(struct qmp_server *s, const char *tag, char *path, size_t len);

/* A socket client of `s` (listening on `path`), connected and greeted. Returns its fd. */
int qmp_test_client(struct qmp_server *s, const char *path);

/* The client `fd` sends qmp_capabilities and reads the answer: events reach it now. */
void qmp_test_negotiate(struct qmp_server *s, int fd);

/*
 * Everything the client `fd` can read after the server dispatched 20 times: NUL-terminated,
 * in a static buffer (the caller may write to it) that the next call reuses.
 */
char *qmp_test_read(struct qmp_server *s, int fd);

/* How often `needle` occurs in `text`. */
unsigned qmp_test_count(const char *text, const char *needle);

#endif
