/* SPDX-License-Identifier: MIT */
/*
 * Shared by the --domain reader's files (not for the rest of the VMM): the reader's state
 * and the element helpers. domain_xml.c loads the document within its bounds and hands the
 * root to domain_xml_read_domain() (domain_xml_elems.c: <domain> and its plain elements),
 * which calls domain_xml_cpus.c for <vcpus>, <cpu>, <cputune> and <memoryBacking>.
 */
#ifndef PLUGVM_VMM_DOMAIN_XML_READER_H
#define PLUGVM_VMM_DOMAIN_XML_READER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "xml_lib.h"

#include "config.h"

struct domain_xml_reader {
	struct vm_config *cfg;
	const char *path;
	char *err;
	size_t errlen;
	bool saw_kernel;
};

/* One line into the caller's err; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) int domain_xml_fail(struct domain_xml_reader *r,
							  const char *fmt, ...);

static inline bool is(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* An attribute's value (the caller frees it with xmlFree), or NULL. */
static inline char *attr(const xmlNode *n, const char *name)
{
	return (char *)xml_lib.get_prop(n, (const xmlChar *)name);
}

/* The element's text with surrounding blanks trimmed, malloc'd; NULL only without memory. */
char *domain_xml_text(const xmlNode *n);

static inline int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	return s ? config_parse_uint(s, strlen(s), max, out) : -EINVAL;
}

/* The yes/no attribute `name` of n into *out (dflt if absent). 0 or domain_xml_fail(). */
int domain_xml_yes_no(struct domain_xml_reader *r, const xmlNode *n, const char *name, bool dflt,
		      bool *out);

/*
 * The readers of <domain> (domain_xml_elems.c) and of its CPU and real-time elements
 * (domain_xml_cpus.c): each fills r->cfg from its element and returns 0, -ENOMEM or
 * domain_xml_fail()'s -EINVAL. <vcpus>, <cpu> and <cputune> need <vcpu> read first.
 */
int domain_xml_read_domain(struct domain_xml_reader *r, const xmlNode *root);
int domain_xml_read_vcpus(struct domain_xml_reader *r, const xmlNode *vcpus);
int domain_xml_read_cpu(struct domain_xml_reader *r, const xmlNode *cpu);
int domain_xml_read_cputune(struct domain_xml_reader *r, const xmlNode *cputune);
int domain_xml_read_memory_backing(struct domain_xml_reader *r, const xmlNode *mb);

#endif
