/* SPDX-License-Identifier: MIT */
/*
 * What a client tool prints and how it dies: its messages on stderr, strings from the
 * server made safe for a terminal, QMP values as JSON without anything a terminal acts on.
 */
#ifndef PLUGVM_TOOLS_LIB_PRINT_H
#define PLUGVM_TOOLS_LIB_PRINT_H

#include <json-c/json.h>

/* The name die() puts first: each program that links the library defines it. */
extern const char prog_name[];

/*
 * "PROG_NAME: " and the message on stderr, then exit(status): atexit handlers run (so
 * plugvm-latency's ends its VM). Never returns.
 */
void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/*
 * A string from the server as text for a terminal: what is not printable UTF-8 (utf8.h) is
 * shown as \xNN. The result lives until 8 more calls; NULL gives "(null)". Not thread-safe.
 */
const char *tty(const char *s);

/* A QMP value as pretty JSON on stdout, nothing in it a terminal acts on. */
void print_json(struct json_object *o);

#endif
