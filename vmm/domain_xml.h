/* SPDX-License-Identifier: MIT */
/*
 * `plugvm --domain FILE.xml`: a libvirt domain document (libxml2) into struct vm_config.
 * What is read, what is refused and what is only warned about: docs/domain-xml.md.
 */
#ifndef PLUGVM_VMM_DOMAIN_XML_H
#define PLUGVM_VMM_DOMAIN_XML_H

#include <stddef.h>

#include "config.h"

/* The namespace of plugvm's own element under <metadata>. */
#define DOMAIN_XML_PLUGVM_NS "https://plugvm.dev/xmlns/domain/1"

/*
 * Fill `cfg` (holding defaults, as config_defaults() leaves it) from the domain document at
 * `path`; the command-line flags are applied over it afterwards. Elements plugvm ignores
 * safely are reported with log_warn(), once each. Returns 0, or -EINVAL (malformed XML,
 * wrong root, an unsupported element or a bad value), -ENOENT/-EACCES (unreadable file) or
 * -ENOMEM, with `err` holding one line naming the file and the element. Main thread (libxml2
 * is initialised here); cfg's strings are the caller's to free with config_free() either way.
 */
int domain_xml_load(struct vm_config *cfg, const char *path, char *err, size_t errlen);

/*
 * Parse a libvirt memory size: `value` in `unit` (NULL: KiB; b/bytes, KB/K/KiB, MB/M/MiB,
 * GB/G/GiB, TB/T/TiB, the decimal ones in powers of 1000) into bytes. 0 or -EINVAL.
 */
int domain_xml_parse_size(const char *value, const char *unit, unsigned long long *bytes);

#endif
