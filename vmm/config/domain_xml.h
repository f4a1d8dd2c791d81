/* SPDX-License-Identifier: MIT */
/*
 * `plugvm --domain FILE.xml`: a libvirt domain document (libxml2) into struct vm_config.
 * What is read, what is refused and what is only warned about: docs/domain-xml.md.
 */
#ifndef PLUGVM_VMM_DOMAIN_XML_H
#define PLUGVM_VMM_DOMAIN_XML_H

#include <stddef.h>

#include "config.h"

/*
 * The bounds on a document (docs/domain-xml.md, "Limits"; test_domain.py:
 * test_hostile_documents_are_refused_in_bounded_time_and_memory). A document is at most
 * DOMAIN_XML_MAX_BYTES, read whole before libxml2 sees it: the largest plugvm can use (1024
 * vCPUs listed in <vcpus> and pinned in <cputune>) is about 150 KiB. <name> as libvirt
 * stores it, in a file NAME.xml (NAME_MAX less 4 bytes), without a newline; <uuid> as
 * libvirt's VIR_UUID_STRING_BUFLEN; file names below PATH_MAX.
 */
#define DOMAIN_XML_MAX_BYTES (1u << 20)
#define DOMAIN_XML_MAX_NAME  251
#define DOMAIN_XML_MAX_UUID  36

/*
 * Counted in the bytes before libxml2 parses them, which bounds its tree and its time:
 * libxml2 2.9 checks each attribute of a tag against the tag's earlier ones and looks a
 * namespace prefix up through every declaration in scope, so time grows with the square of
 * these counts (test_hostile_documents_are_refused_in_bounded_time_and_memory). At most
 * DOMAIN_XML_MAX_MARKUP '<' (tags, comments, ...), DOMAIN_XML_MAX_ATTRS attributes in one
 * tag and DOMAIN_XML_MAX_ATTRS_TOTAL in the document: the 1024-vCPU document above has
 * about 3,100 tags and 9,200 attributes, of at most 5 in one tag.
 */
#define DOMAIN_XML_MAX_MARKUP	   16384
#define DOMAIN_XML_MAX_ATTRS	   32
#define DOMAIN_XML_MAX_ATTRS_TOTAL 16384

/* The namespace of plugvm's own element under <metadata>. */
#define DOMAIN_XML_PLUGVM_NS "https://plugvm.dev/xmlns/domain/1"

/*
 * Fill `cfg` (holding defaults, as config_defaults() leaves it) from the domain document at
 * `path`; the command-line flags are applied over it afterwards. Elements plugvm ignores
 * safely are reported with log_warn(), once each. A document with a DOCTYPE (a DTD, entity
 * declarations), larger than DOMAIN_XML_MAX_BYTES or not a regular file is refused before
 * it is parsed: no entity is ever expanded, nothing is loaded from elsewhere. Returns 0, or
 * -EINVAL (malformed XML, a DOCTYPE, too large, wrong root, an unsupported element or a bad
 * value, a string over its bound), -ENOENT/-EACCES (unreadable file) or
 * -ENOMEM, with `err` holding one line naming the file and the element. Main thread (libxml2
 * is loaded with dlopen() and initialised here, xml_lib.h); cfg's strings are the caller's to
 * free with config_free() either way.
 */
int domain_xml_load(struct vm_config *cfg, const char *path, char *err, size_t errlen);

/* No more documents will be read: libxml2 is unloaded (xml_lib_unload()). */
void domain_xml_done(void);

/*
 * Parse a libvirt memory size: `value` in `unit` (NULL: KiB; b/bytes, KB/K/KiB, MB/M/MiB,
 * GB/G/GiB, TB/T/TiB, the decimal ones in powers of 1000) into bytes. 0 or -EINVAL.
 */
int domain_xml_parse_size(const char *value, const char *unit, unsigned long long *bytes);

#endif
