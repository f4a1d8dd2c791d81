/* SPDX-License-Identifier: MIT */
/*
 * The ELF header of a test kernel (an x86-64 executable whose program headers follow the
 * header), shared by the loader's unit tests and the fuzzers' seed generator.
 */
#ifndef PLUGVM_TESTS_UNIT_ELF_HEADER_H
#define PLUGVM_TESTS_UNIT_ELF_HEADER_H

#include <elf.h>
#include <string.h>

static inline void elf_header_init(Elf64_Ehdr *eh, uint64_t entry, uint16_t phnum)
{
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = entry;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = phnum;
}

#endif
