// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: loader_load_elf() on the input as a kernel image, loaded into a small
 * guest memory. Beyond "no crash, no UB", a successful load must satisfy the loader's
 * contract (entry inside what was loaded, everything at or above 1 MiB and inside RAM).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/loader.h"
#include "vmm/log.h"
#include "vmm/mem.h"

#define GUEST_MEM (2ull << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct guest_mem mem;
	static int ready;
	struct loaded_kernel k;
	char err[256] = "";
	int ret;

	if (!ready) {
		log_set_level(LOG_ERROR);
		if (mem_init(&mem, GUEST_MEM))
			abort();
		ready = 1;
	}
	ret = loader_load_elf(&mem, data, size, &k, err, sizeof(err));
	if (ret) {
		/* Every refusal explains itself. */
		if (!err[0] || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	if (k.lowest < 0x100000 || k.highest > GUEST_MEM || k.lowest >= k.highest ||
	    k.entry < k.lowest || k.entry >= k.highest)
		abort();
	return 0;
}
