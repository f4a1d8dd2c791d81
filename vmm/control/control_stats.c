// SPDX-License-Identifier: MIT
/*
 * query-stats and query-stats-schemas in QEMU 7.1's shapes, provider "kvm", targets "vm"
 * and "vcpu", from KVM's binary statistics (kvm_stats.h): VM exits by reason per vCPU,
 * the figure that carries over from this machine's emulated guest to hardware KVM.
 */
#include "control_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "../cpus.h"
#include "../kvm_stats.h"
#include "../vm.h"
#include "control_cpus.h"
#include "qmp.h"

#define MAX_NAMES 256

/* The `names` filter of the "kvm" provider: NULL for all. */
struct filter {
	struct json_object *names;
};

static bool wanted(const struct filter *f, const char *name)
{
	size_t i, n;

	if (!f->names)
		return true;
	n = json_object_array_length(f->names);
	for (i = 0; i < n; i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(f->names, i)), name))
			return true;
	return false;
}

static struct json_object *stat_value(const struct kvm_stat *st)
{
	struct json_object *list;
	unsigned i;

	if (st->size == 1 && kvm_stat_unit(st) && !strcmp(kvm_stat_unit(st), "boolean"))
		return json_object_new_boolean(st->values[0] != 0);
	if (st->size == 1 && !strstr(kvm_stat_type(st), "histogram"))
		return json_object_new_uint64(st->values[0]);
	list = json_object_new_array();
	for (i = 0; i < st->size; i++)
		json_object_array_add(list, json_object_new_uint64(st->values[i]));
	return list;
}

/* One StatsResult: {"provider", ["qom-path",] "stats": [{"name", "value"}]}; NULL on error. */
static struct json_object *result(int stats_fd, const char *qom_path, const struct filter *f,
				  struct qmp_error *err)
{
	struct json_object *r, *stats;
	struct kvm_stats s;
	unsigned i;
	int ret = kvm_stats_read(stats_fd, &s);

	if (ret) {
		qmp_error_set(err, "GenericError", "KVM statistics: %s", strerror(-ret));
		return NULL;
	}
	r = json_object_new_object();
	stats = json_object_new_array();
	json_object_object_add(r, "provider", json_object_new_string("kvm"));
	if (qom_path)
		json_object_object_add(r, "qom-path", json_object_new_string(qom_path));
	for (i = 0; i < s.n; i++) {
		struct json_object *v;

		if (!wanted(f, s.stat[i].name))
			continue;
		v = json_object_new_object();
		json_object_object_add(v, "name", json_object_new_string(s.stat[i].name));
		json_object_object_add(v, "value", stat_value(&s.stat[i]));
		json_object_array_add(stats, v);
	}
	json_object_object_add(r, "stats", stats);
	kvm_stats_free(&s);
	return r;
}

/* `providers`: absent, or a list whose entries name "kvm" (with optional string names). */
static int parse_providers(struct json_object *args, struct filter *f, struct qmp_error *err)
{
	struct json_object *list, *e, *o;
	size_t i, j;

	f->names = NULL;
	if (!json_object_object_get_ex(args, "providers", &list))
		return 0;
	for (i = 0; i < json_object_array_length(list); i++) {
		e = json_object_array_get_idx(list, i);
		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "provider", &o) ||
		    !json_object_is_type(o, json_type_string)) {
			qmp_error_set(
			    err, "GenericError",
			    "Parameter 'providers' expects a list of {\"provider\": ...}");
			return -EINVAL;
		}
		if (strcmp(json_object_get_string(o), "kvm")) {
			qmp_error_set(err, "GenericError",
				      "Parameter 'provider' does not accept value '%.64s'",
				      json_object_get_string(o));
			return -EINVAL;
		}
		if (!json_object_object_get_ex(e, "names", &o))
			continue;
		if (!json_object_is_type(o, json_type_array) ||
		    json_object_array_length(o) > MAX_NAMES) {
			qmp_error_set(err, "GenericError",
				      "Parameter 'names' expects a list of at most %d strings",
				      MAX_NAMES);
			return -EINVAL;
		}
		for (j = 0; j < json_object_array_length(o); j++)
			if (!json_object_is_type(json_object_array_get_idx(o, j),
						 json_type_string)) {
				qmp_error_set(err, "GenericError",
					      "Parameter 'names' expects strings");
				return -EINVAL;
			}
		f->names = o;
	}
	return 0;
}

/* Is `path` in the `vcpus` filter (absent: every vCPU)? */
static bool vcpu_wanted(struct json_object *vcpus, const char *path)
{
	size_t i;

	if (!vcpus)
		return true;
	for (i = 0; i < json_object_array_length(vcpus); i++) {
		struct json_object *p = json_object_array_get_idx(vcpus, i);

		if (json_object_is_type(p, json_type_string) &&
		    !strcmp(json_object_get_string(p), path))
			return true;
	}
	return false;
}

static struct json_object *query_stats(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o, *vcpus = NULL, *list, *r;
	struct filter f;
	const char *target;
	unsigned slot;

	json_object_object_get_ex(args, "target", &o);
	target = json_object_get_string(o);
	if (parse_providers(args, &f, err))
		return NULL;
	if (json_object_object_get_ex(args, "vcpus", &vcpus) && strcmp(target, "vcpu")) {
		qmp_error_set(err, "GenericError", "Parameter 'vcpus' applies to target 'vcpu'");
		return NULL;
	}
	list = json_object_new_array();
	if (!strcmp(target, "vm")) {
		int sfd = kvm_stats_open(vm->kvm.vm_fd);

		r = result(sfd, NULL, &f, err);
		if (sfd >= 0)
			close(sfd);
		if (!r)
			goto fail;
		json_object_array_add(list, r);
		return list;
	}
	if (strcmp(target, "vcpu")) {
		qmp_error_set(err, "GenericError",
			      "Parameter 'target' does not accept value '%.64s' (vm, vcpu)",
			      target);
		goto fail;
	}
	for (slot = 0; slot < vm->cfg->max_cpus; slot++) {
		char path[96];

		if (!cpus_present(vm->cpus, slot))
			continue;
		control_cpu_path(vm, slot, path, sizeof(path));
		if (!vcpu_wanted(vcpus, path))
			continue;
		r = result(cpus_stats_fd(vm->cpus, slot), path, &f, err);
		if (!r)
			goto fail;
		json_object_array_add(list, r);
	}
	return list;
fail:
	json_object_put(list);
	return NULL;
}

static struct json_object *schema(int stats_fd, const char *target)
{
	struct json_object *r = json_object_new_object(), *stats = json_object_new_array();
	struct kvm_stats s;
	unsigned i;

	json_object_object_add(r, "provider", json_object_new_string("kvm"));
	json_object_object_add(r, "target", json_object_new_string(target));
	if (!kvm_stats_read(stats_fd, &s)) {
		for (i = 0; i < s.n; i++) {
			const struct kvm_stat *st = &s.stat[i];
			struct json_object *v = json_object_new_object();

			json_object_object_add(v, "name", json_object_new_string(st->name));
			json_object_object_add(v, "type",
					       json_object_new_string(kvm_stat_type(st)));
			if (kvm_stat_unit(st))
				json_object_object_add(v, "unit",
						       json_object_new_string(kvm_stat_unit(st)));
			json_object_object_add(v, "base", json_object_new_int(kvm_stat_base(st)));
			json_object_object_add(v, "exponent", json_object_new_int(st->exponent));
			if (!strcmp(kvm_stat_type(st), "linear-histogram"))
				json_object_object_add(v, "bucket-size",
						       json_object_new_int64(st->bucket_size));
			json_object_array_add(stats, v);
		}
		kvm_stats_free(&s);
	}
	json_object_object_add(r, "stats", stats);
	return r;
}

static struct json_object *query_stats_schemas(void *ctx, struct json_object *args,
					       struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o, *list;
	unsigned slot;
	int fd = -1, vm_fd;

	if (json_object_object_get_ex(args, "provider", &o) &&
	    strcmp(json_object_get_string(o), "kvm")) {
		qmp_error_set(err, "GenericError",
			      "Parameter 'provider' does not accept value '%.64s'",
			      json_object_get_string(o));
		return NULL;
	}
	for (slot = 0; slot < vm->cfg->max_cpus && fd < 0; slot++)
		if (cpus_present(vm->cpus, slot))
			fd = cpus_stats_fd(vm->cpus, slot);
	list = json_object_new_array();
	vm_fd = kvm_stats_open(vm->kvm.vm_fd);
	json_object_array_add(list, schema(vm_fd, "vm"));
	if (vm_fd >= 0)
		close(vm_fd);
	json_object_array_add(list, schema(fd, "vcpu"));
	return list;
}

static const struct qmp_arg query_stats_args[] = {
	{ "target", json_type_string, true },
	{ "providers", json_type_array, false },
	{ "vcpus", json_type_array, false },
	{ NULL, json_type_null, false },
};

static const struct qmp_arg query_stats_schemas_args[] = {
	{ "provider", json_type_string, false },
	{ NULL, json_type_null, false },
};

const struct qmp_command control_stats_commands[] = {
	{ "query-stats", query_stats, query_stats_args },
	{ "query-stats-schemas", query_stats_schemas, query_stats_schemas_args },
	{ NULL, NULL, NULL },
};
