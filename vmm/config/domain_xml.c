// SPDX-License-Identifier: MIT
/*
 * Loading a libvirt domain document (see domain_xml.h, docs/domain-xml.md): the document is
 * untrusted input, read whole within DOMAIN_XML_MAX_BYTES, its markup counted before libxml2
 * sees it, refused if it has a DOCTYPE (so no entity is declared, none expanded), no
 * network. Its elements are read by domain_xml_elems.c and domain_xml_cpus.c, where every
 * number is range-checked and every string kept bounded.
 */
#include "domain_xml.h"
#include "domain_xml_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xml_lib.h"

/*
 * The file at `path` whole (malloc'd, NUL-terminated, its length in *len), at most
 * DOMAIN_XML_MAX_BYTES: checked on its size before reading and on what was read (it may
 * grow). Opened without blocking: a FIFO or a device is refused, not waited on. NULL with
 * *ret the -errno (-EINVAL: not a regular file, too large) and err saying why.
 */
static char *read_document(const char *path, size_t *len, int *ret, char *err, size_t errlen)
{
	size_t cap = DOMAIN_XML_MAX_BYTES + 1, n = 0;
	struct stat st;
	char *b = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		goto sys_err;
	if (fstat(fd, &st))
		goto sys_err;
	*ret = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		config_set_err(err, errlen, "--domain %s: not a regular file", path);
		goto out;
	}
	if (st.st_size > DOMAIN_XML_MAX_BYTES)
		goto too_large;
	*ret = -ENOMEM;
	b = malloc(cap + 1);
	if (!b)
		goto out;
	while (n < cap) {
		ssize_t got = read(fd, b + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto sys_err;
		if (!got)
			break;
		n += (size_t)got;
	}
	if (n > DOMAIN_XML_MAX_BYTES)
		goto too_large;
	b[n] = '\0';
	*len = n;
	close(fd);
	return b;
sys_err:
	*ret = errno ? -errno : -EIO;
	config_set_err(err, errlen, "--domain %s: %s", path, strerror(-*ret));
	goto out;
too_large:
	*ret = -EINVAL;
	config_set_err(err, errlen, "--domain %s: larger than the %u KiB a domain document may be",
		       path, DOMAIN_XML_MAX_BYTES >> 10);
out:
	free(b);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * The markup counts of domain_xml.h over the raw bytes, conservatively: libxml2 reads them
 * as UTF-8 (as told, whatever the document declares; a byte that is not UTF-8 makes it
 * fall back to Latin-1), so every tag starts at a '<' byte, a tag ends at a '>' before the
 * next '<' (an attribute value holding '<' ends the tag), and each attribute it parses
 * takes one '=' byte. So the '=' between a '<' and the last '>' before the next '<' bound
 * that tag's attributes; '=' in comments, PIs and text before a '>' count too (overcounted,
 * never undercounted). Returns 0 or domain_xml_fail()'s -EINVAL.
 */
static int scan_markup(struct domain_xml_reader *r, const char *b, size_t len)
{
	const char *p = memchr(b, '<', len), *end = b + len;
	unsigned long nr_markup = 0, nr_attrs = 0;

	while (p) {
		const char *next = memchr(p + 1, '<', (size_t)(end - p - 1)),
			   *stop = next ? next : end;
		const char *gt = stop;
		unsigned long attrs = 0;

		if (++nr_markup > DOMAIN_XML_MAX_MARKUP)
			return domain_xml_fail(
			    r, "%s: more than %d tags: past what a domain document may hold",
			    r->path, DOMAIN_XML_MAX_MARKUP);
		while (gt > p && gt[-1] != '>')
			gt--;
		if (gt == p)
			gt = stop; /* no '>': libxml2 reads attributes to the end */
		if (p + 1 < end && p[1] != '!' && p[1] != '?')
			for (const char *c = p; (c = memchr(c, '=', (size_t)(gt - c))); c++)
				attrs++;
		if (attrs > DOMAIN_XML_MAX_ATTRS)
			return domain_xml_fail(r, "%s: a tag with more than %d attributes", r->path,
					       DOMAIN_XML_MAX_ATTRS);
		nr_attrs += attrs;
		if (nr_attrs > DOMAIN_XML_MAX_ATTRS_TOTAL)
			return domain_xml_fail(
			    r,
			    "%s: more than %d attributes: past what a domain document "
			    "may hold",
			    r->path, DOMAIN_XML_MAX_ATTRS_TOTAL);
		p = next;
	}
	return 0;
}

/*
 * libxml2's SAX callback for <!DOCTYPE ...>, before any of its internal subset is read:
 * marks the document refused and stops the parser there, so no entity is declared, none
 * expanded and no external DTD or entity loaded.
 */
static void refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
			   const xmlChar *system_id)
{
	xmlParserCtxtPtr ctxt = ctx;

	(void)name;
	(void)external_id;
	(void)system_id;
	*(bool *)ctxt->_private = true;
	xml_lib.stop_parser(ctxt);
}

int domain_xml_load(struct vm_config *cfg, const char *path, char *err, size_t errlen)
{
	struct domain_xml_reader r = { .cfg = cfg, .path = path, .err = err, .errlen = errlen };
	bool saw_doctype = false;
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc;
	size_t len = 0;
	char *buf;
	int ret = 0;

	ret = xml_lib_load(err, errlen);
	if (ret)
		return ret;
	buf = read_document(path, &len, &ret, err, errlen);
	if (!buf)
		return ret;
	ret = scan_markup(&r, buf, len);
	if (ret) {
		free(buf);
		return ret;
	}
	ctxt = xml_lib.new_parser_ctxt();
	if (!ctxt) {
		free(buf);
		return -ENOMEM;
	}
	ctxt->_private = &saw_doctype;
	ctxt->sax->internalSubset = refuse_doctype;
	/*
	 * UTF-8 whatever the document declares (scan_markup() counted its bytes as that); no
	 * network, no DTD loading, no entity substitution, libxml2's own limits on names, text
	 * and depth (never XML_PARSE_HUGE); errors come back, not on stderr.
	 */
	doc = xml_lib.ctxt_read_memory(ctxt, buf, (int)len, path, "UTF-8",
				       XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
					   XML_PARSE_IGNORE_ENC);
	free(buf);
	if (saw_doctype) {
		config_set_err(
		    err, errlen,
		    "%s: <!DOCTYPE>: refused (plugvm reads no DTD and expands no entities)", path);
		xml_lib.free_doc(doc);
		xml_lib.free_parser_ctxt(ctxt);
		return -EINVAL;
	}
	if (!doc) {
		const xmlError *e = xml_lib.ctxt_get_last_error(ctxt);
		const char *msg = e && e->message ? e->message : "unreadable";

		config_set_err(err, errlen, "%s:%d: malformed XML: %.*s", path, e ? e->line : 0,
			       (int)strcspn(msg, "\n"), msg);
		xml_lib.free_parser_ctxt(ctxt);
		return -EINVAL;
	}
	if (!xml_lib.doc_get_root_element(doc))
		ret = domain_xml_fail(&r, "%s: an empty document", path);
	else
		ret = domain_xml_read_domain(&r, xml_lib.doc_get_root_element(doc));
	if (ret == -ENOMEM)
		config_set_err(err, errlen, "%s: out of memory", path);
	xml_lib.free_doc(doc);
	xml_lib.free_parser_ctxt(ctxt);
	return ret;
}

void domain_xml_done(void)
{
	xml_lib_unload();
}
