// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: agent messages arriving from the guest (vmm/control/agent*.c and the
 * commands that wait for them, control_agent.c), with a QMP client in the same process
 * asking for what makes the host send requests. The input is a program of steps:
 *   0 N BYTES...    N raw bytes on the agent channel, as the transmitq hands them over
 *   1 T F S4 L2 P.. a whole message: type T (low byte; 0x100 added if F bit 7), flags F & 3,
 *                   the id of the host's last request if F bit 6 (else S4's low byte), status
 *                   S4, length L2, then payload bytes from the input
 *   2 C A           QMP command C % 13 with argument byte A (a CPU, a state, a workload)
 * and after every step the main loop's agent_process() and the QMP server's dispatch run.
 * Every line a client gets must parse as JSON and be printable UTF-8: guest strings reach
 * clients cleaned.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_agent.h"
#include "vmm/control/agent.h"
#include "vmm/control/control_agent.h"
#include "vmm/control/qmp.h"
#include "vmm/devices/virtio_console.h"
#include "vmm/log.h"
#include "vmm/utf8.h"
#include "vmm/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = 4 };
static struct vm vm;
static int fake_virtio;
static struct virtio_agent_ops channel;
static struct plugvm_agent_hdr last_request;

int virtio_agent_send(struct vm *v, const void *msg, size_t len)
{
	(void)v;
	if (len != PLUGVM_AGENT_MSG_SIZE)
		abort();
	memcpy(&last_request, msg, sizeof(last_request));
	return 0;
}

void virtio_agent_set_ops(struct vm *v, const struct virtio_agent_ops *ops)
{
	(void)v;
	channel = *ops;
}

static void check_output(struct qmp_session *c)
{
	size_t len, i, j, n, start = 0;
	const char *out = qmp_session_output(c, &len);

	for (i = 0; i < len; i++) {
		struct json_tokener *tok;
		struct json_object *o;

		if (out[i] != '\n')
			continue;
		/* Printable UTF-8 (JSON escapes control characters), then valid JSON. */
		for (j = start; j < i && !(out[j] == '\r' && j + 1 == i); j += n) {
			n = utf8_printable_len((const unsigned char *)out + j, i - j);
			if (!n) {
				fprintf(stderr, "bad line: %.*s\n", (int)(i - start), out + start);
				abort();
			}
		}
		tok = json_tokener_new();
		if (!tok)
			abort();
		o = json_tokener_parse_ex(tok, out + start, (int)(i - start));
		json_tokener_free(tok);
		if (!o) {
			fprintf(stderr, "not JSON: %.*s\n", (int)(i - start), out + start);
			abort();
		}
		json_object_put(o);
		start = i + 1;
	}
	qmp_session_consume(c, start);
}

/* The commands, each a format taking one kind of argument. */
enum arg_kind { ARG_NONE, ARG_CPU, ARG_CPU_STATE, ARG_WORD, ARG_ID };
static const struct {
	const char *fmt;
	enum arg_kind arg;
} commands[] = {
	{ "{\"execute\":\"query-agent\"}", ARG_NONE },
	{ "{\"execute\":\"query-cpuhp-states\"}", ARG_NONE },
	{ "{\"execute\":\"query-cpuhp\"}", ARG_NONE },
	{ "{\"execute\":\"cpuhp-set-target\",\"arguments\":{\"cpu\":%d,\"state\":%s}}",
	  ARG_CPU_STATE },
	{ "{\"execute\":\"cpuhp-fail\",\"arguments\":{\"cpu\":%d,\"state\":%s}}", ARG_CPU_STATE },
	{ "{\"execute\":\"cpuhp-subscribe\",\"arguments\":{\"enable\":%s}}", ARG_WORD },
	{ "{\"execute\":\"query-timers\"}", ARG_NONE },
	{ "{\"execute\":\"query-timers\",\"arguments\":{\"cpu\":%d}}", ARG_CPU },
	{ "{\"execute\":\"query-sched\"}", ARG_NONE },
	{ "{\"execute\":\"query-sched\",\"arguments\":{\"cpu\":%d}}", ARG_CPU },
	{ "{\"execute\":\"query-locks\"}", ARG_NONE },
	{ "{\"execute\":\"workload-start\",\"arguments\":{\"kind\":\"%s\"}}", ARG_WORD },
	{ "{\"execute\":\"workload-stop\",\"arguments\":{\"id\":%u}}", ARG_ID },
};

static void command(struct qmp_session *c, uint8_t which, uint8_t arg)
{
	static const char *const states[] = { "\"offline\"", "\"online\"", "1", "-3" };
	static const char *const words[] = { "true", "false", "hogs", "timers" };
	unsigned k = which % (sizeof(commands) / sizeof(commands[0]));
	int cpu = arg % 6 - 1; /* -1 to one past maxcpus */
	char line[256];
	int n;

	switch (commands[k].arg) {
	case ARG_NONE:
		n = snprintf(line, sizeof(line), "%s", commands[k].fmt);
		break;
	case ARG_CPU:
		n = snprintf(line, sizeof(line), commands[k].fmt, cpu);
		break;
	case ARG_CPU_STATE:
		n = snprintf(line, sizeof(line), commands[k].fmt, cpu, states[arg % 4]);
		break;
	case ARG_WORD:
		n = snprintf(line, sizeof(line), commands[k].fmt, words[arg % 4]);
		break;
	default:
		n = snprintf(line, sizeof(line), commands[k].fmt, (unsigned)arg);
		break;
	}
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		abort();
	line[n++] = '\n';
	qmp_session_input(c, line, (size_t)n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char caps[] = "{\"execute\":\"qmp_capabilities\"}\n";
	struct plugvm_agent_msg m;
	struct qmp_session *c;
	size_t off = 0;

	log_set_level(LOG_ERROR);
	memset(&vm, 0, sizeof(vm));
	memset(&last_request, 0, sizeof(last_request));
	vm.cfg = &cfg;
	vm.virtio = (struct virtio_devices *)&fake_virtio;
	if (agent_init(&vm))
		abort();
	vm.qmp = qmp_server_create(control_agent_commands, &vm, "plugvm fuzz", 0, 2, 0);
	if (!vm.qmp)
		abort();
	agent_set_event_fn(&vm, control_agent_event);
	c = qmp_session_create(vm.qmp);
	if (!c)
		abort();
	qmp_session_input(c, caps, sizeof(caps) - 1);
	check_output(c);

	while (off < size && !qmp_session_closing(c)) {
		uint8_t op = data[off++];

		if (op % 3 == 0 && off < size) {
			size_t n = data[off++];

			if (n > size - off)
				n = size - off;
			channel.rx(channel.opaque, data + off, n);
			off += n;
		} else if (op % 3 == 1 && size - off >= 8) {
			uint8_t f = data[off + 1];
			uint16_t len;
			size_t n;

			memset(&m, 0, sizeof(m));
			m.hdr.magic = PLUGVM_AGENT_MAGIC;
			m.hdr.version = PLUGVM_AGENT_VERSION;
			m.hdr.type = (uint16_t)(data[off] | (f & 0x80 ? 0x100 : 0));
			m.hdr.flags = f & 3;
			memcpy(&m.hdr.status, data + off + 2, 4);
			m.hdr.id = f & 0x40 ? last_request.id : (uint8_t)m.hdr.status;
			memcpy(&len, data + off + 6, 2);
			m.hdr.len = len;
			off += 8;
			n = size - off < PLUGVM_AGENT_PAYLOAD ? size - off : PLUGVM_AGENT_PAYLOAD;
			if (n > len)
				n = len;
			memcpy(m.payload, data + off, n);
			off += n;
			channel.rx(channel.opaque, (const uint8_t *)&m, sizeof(m));
		} else if (op % 3 == 2 && size - off >= 2) {
			command(c, data[off], data[off + 1]);
			off += 2;
		} else {
			break;
		}
		agent_process(&vm);
		check_output(c);
	}
	qmp_session_destroy(c);
	agent_shutdown(&vm);
	qmp_server_destroy(vm.qmp);
	agent_exit(&vm);
	control_agent_free(&vm);
	return 0;
}
