/* SPDX-License-Identifier: MIT */
/*
 * The AP start-up trampoline. INIT-SIPI-SIPI starts an AP in real mode at
 * TRAMPOLINE_BASE (SIPI vector = page number); this code is copied there at boot. It is
 * position-fixed (offsets are taken against TRAMPOLINE_BASE), read-only, and may run on
 * many APs at once: it touches no memory but the boot GDT and page tables.
 */
#include "asm.h"

#define TR(sym) (TRAMPOLINE_BASE + (sym) - trampoline_start)

	.section .rodata.trampoline, "a"
	.globl trampoline_start
	.globl trampoline_end
	.code16
trampoline_start:
	cli
	cld
	movw	%cs, %ax
	movw	%ax, %ds
	lgdtl	(tr_gdt_desc - trampoline_start)
	movl	%cr0, %eax
	orl	$CR0_PE, %eax
	movl	%eax, %cr0
	ljmpl	$GDT_BOOT_CS32, $TR(tr32)

	.code32
tr32:
	movl	$GDT_KERNEL_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	ENTER_LONG_MODE (CR0_PG|CR0_WP)
	ljmpl	$GDT_KERNEL_CS, $TR(tr64)

	.code64
tr64:
	movabsq	$ap_start64, %rax
	jmp	*%rax

	.balign 8
tr_gdt_desc:
	.word	31
	.long	boot_gdt
trampoline_end:

	.section .note.GNU-stack, "", @progbits
