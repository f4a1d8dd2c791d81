/* SPDX-License-Identifier: MIT */
/*
 * libxml2 for the --domain reader, loaded with dlopen() when a document is read and never
 * otherwise: linked, libxml2 brings ICU, libstdc++, libm, zlib and liblzma into every VM,
 * resident mappings a VM started without --domain never uses (bench/README.md, "VMM memory";
 * tests/integration/test_memory.py). Only the reader's files use it.
 */
#ifndef PLUGVM_VMM_XML_LIB_H
#define PLUGVM_VMM_XML_LIB_H

#include <stddef.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

/* The libxml2 calls the reader makes; filled by xml_lib_load(). */
struct xml_lib {
	void (*check_version)(int version);
	xmlParserCtxtPtr (*new_parser_ctxt)(void);
	xmlDocPtr (*ctxt_read_memory)(xmlParserCtxtPtr ctxt, const char *buffer, int size,
				      const char *url, const char *encoding, int options);
	xmlErrorPtr (*ctxt_get_last_error)(void *ctx);
	void (*free_parser_ctxt)(xmlParserCtxtPtr ctxt);
	void (*free_doc)(xmlDocPtr doc);
	xmlNodePtr (*doc_get_root_element)(const xmlDoc *doc);
	void (*stop_parser)(xmlParserCtxtPtr ctxt);
	xmlChar *(*node_get_content)(const xmlNode *cur);
	xmlChar *(*get_prop)(const xmlNode *node, const xmlChar *name);
	int (*mem_get)(xmlFreeFunc *free_fn, xmlMallocFunc *malloc_fn, xmlReallocFunc *realloc_fn,
		       xmlStrdupFunc *strdup_fn);
	void (*cleanup_parser)(void);
	xmlFreeFunc free_fn; /* libxml2's xmlFree, from xmlMemGet() */
};

extern struct xml_lib xml_lib;

/*
 * libxml2 (libxml2.so.2) loaded and every call above resolved, once; later calls return at
 * once. 0, or -ENOENT with err saying what is missing (test_domain_xml.c runs the reader
 * through it).
 */
int xml_lib_load(char *err, size_t errlen);

/*
 * Done with libxml2 for the life of the process (main(), once the document is read):
 * libxml2's global state freed (xmlCleanupParser) and the library closed, so that the VM
 * does not keep it and what it brought (ICU, libstdc++) mapped (bench/memory/run,
 * plugvm-domain). A later xml_lib_load() loads it again.
 */
void xml_lib_unload(void);

/* libxml2's xmlFree(p), for what its calls returned; NULL is fine. */
static inline void xml_free(void *p)
{
	if (p)
		xml_lib.free_fn(p);
}

#endif
