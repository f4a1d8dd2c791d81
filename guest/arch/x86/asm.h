/* SPDX-License-Identifier: MIT */
/* Constants shared by the x86 assembly files and C: selectors, control bits, addresses. */
#ifndef PLUGVM_GUEST_X86_ASM_H
#define PLUGVM_GUEST_X86_ASM_H

/* GDT layout, identical on every CPU (each CPU owns a copy with its own TSS). */
#define GDT_KERNEL_CS 0x08 /* 64-bit code */
#define GDT_KERNEL_DS 0x10 /* data */
#define GDT_BOOT_CS32 0x18 /* 32-bit code, used only while entering long mode */
#define GDT_TSS	      0x20 /* 16-byte TSS descriptor */
#define GDT_ENTRIES   6

#define CR0_PE	    0x00000001
#define CR0_WP	    0x00010000
#define CR0_PG	    0x80000000
#define CR4_PAE	    0x00000020
#define CR4_PGE	    0x00000080
#define MSR_EFER    0xc0000080
#define EFER_LME    0x00000100
#define MSR_GS_BASE 0xc0000101

/* AP trampoline: real-mode code copied here; the SIPI vector is its page number. */
#define TRAMPOLINE_BASE 0x8000

/* Boot stack of the boot CPU (bytes). */
#define BOOT_STACK_SIZE 16384

/* Per-CPU kernel stack size (bytes) and the IST stack for double faults and NMIs. */
#define CPU_STACK_SIZE 16384
#define IST_STACK_SIZE 8192 /* halves: the NMI report formats lines on its half */

/* Largest APIC ID the AP start-up table covers. */
#define MAX_APIC_ID 4096

#ifdef __ASSEMBLY__
/*
 * From 32-bit protected mode into long mode (the boot CPU in entry.S, an AP in
 * trampoline.S): PAE, the boot page tables, EFER.LME, then paging on with the CR0 bits
 * `cr0` (one word: no spaces). The caller far-jumps to 64-bit code right after.
 * Clobbers eax, ecx, edx.
 */
/* clang-format off */
.macro ENTER_LONG_MODE cr0
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$boot_pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	movl	%cr0, %eax
	orl	$\cr0, %eax
	movl	%eax, %cr0
.endm
/* clang-format on */
#endif

#endif
