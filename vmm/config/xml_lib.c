// SPDX-License-Identifier: MIT
/* libxml2 loaded on first use (see xml_lib.h). */
#include "xml_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "config.h"

struct xml_lib xml_lib;
static void *handle; /* dlopen()'s, while loaded */

int xml_lib_load(char *err, size_t errlen)
{
	static const struct {
		const char *name;
		size_t offset;
	} calls[] = {
		{ "xmlCheckVersion", offsetof(struct xml_lib, check_version) },
		{ "xmlNewParserCtxt", offsetof(struct xml_lib, new_parser_ctxt) },
		{ "xmlCtxtReadMemory", offsetof(struct xml_lib, ctxt_read_memory) },
		{ "xmlCtxtGetLastError", offsetof(struct xml_lib, ctxt_get_last_error) },
		{ "xmlFreeParserCtxt", offsetof(struct xml_lib, free_parser_ctxt) },
		{ "xmlFreeDoc", offsetof(struct xml_lib, free_doc) },
		{ "xmlDocGetRootElement", offsetof(struct xml_lib, doc_get_root_element) },
		{ "xmlStopParser", offsetof(struct xml_lib, stop_parser) },
		{ "xmlNodeGetContent", offsetof(struct xml_lib, node_get_content) },
		{ "xmlGetProp", offsetof(struct xml_lib, get_prop) },
		{ "xmlMemGet", offsetof(struct xml_lib, mem_get) },
		{ "xmlCleanupParser", offsetof(struct xml_lib, cleanup_parser) },
	};
	struct xml_lib l;
	void *h;
	size_t i;

	if (handle)
		return 0;
	h = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		config_set_err(err, errlen, "--domain needs libxml2 (libxml2.so.2): %s", dlerror());
		return -ENOENT;
	}
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		void *sym = dlsym(h, calls[i].name);

		if (!sym) {
			config_set_err(err, errlen, "--domain: libxml2.so.2 has no %s",
				       calls[i].name);
			dlclose(h);
			return -ENOENT;
		}
		/* POSIX: a function pointer and a data pointer convert through dlsym(). */
		memcpy((char *)&l + calls[i].offset, &sym, sizeof(sym));
	}
	/* libxml2's own check of the headers plugvm was built with against the library. */
	l.check_version(LIBXML_VERSION);
	if (l.mem_get(&l.free_fn, NULL, NULL, NULL) || !l.free_fn) {
		config_set_err(err, errlen, "--domain: libxml2's xmlMemGet() failed");
		dlclose(h);
		return -ENOENT;
	}
	xml_lib = l;
	handle = h;
	return 0;
}

void xml_lib_unload(void)
{
	if (!handle)
		return;
	xml_lib.cleanup_parser();
	dlclose(handle);
	handle = NULL;
	memset(&xml_lib, 0, sizeof(xml_lib));
}
