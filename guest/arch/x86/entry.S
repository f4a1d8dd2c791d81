/* SPDX-License-Identifier: MIT */
/*
 * PVH entry: the loader (plugvm or QEMU's pvh.bin) jumps here in 32-bit flat protected
 * mode, paging off, EBX = hvm_start_info. We load our own GDT and stack, switch to long
 * mode on the static identity map below, and call arch_boot(start_info).
 *
 * The page tables are assembled, not built at run time: on hosts where guest kernel code
 * is emulated, a 2048-iteration setup loop would cost milliseconds of boot.
 */
#include "asm.h"

	.section .note.pvh, "a"
	.balign 4
	.long 4			/* name size: "Xen\0" */
	.long 8			/* descriptor size */
	.long 18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.balign 4
	.quad pvh_entry

	.section .text.entry, "ax"
	.code32
	.globl pvh_entry
pvh_entry:
	cli
	cld
	movl	%ebx, %esi			/* keep start_info */
	lgdt	boot_gdt_desc
	ljmp	$GDT_BOOT_CS32, $1f
1:	movl	$GDT_KERNEL_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	movl	$boot_stack_top, %esp

	ENTER_LONG_MODE (CR0_PG|CR0_WP|CR0_PE)
	ljmp	$GDT_KERNEL_CS, $entry64

	.code64
entry64:
	xorl	%eax, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %fs
	movl	%eax, %gs
	movl	$GDT_KERNEL_DS, %eax
	movl	%eax, %ss
	movq	$boot_stack_top, %rsp
	xorl	%ebp, %ebp
	movl	%esi, %edi			/* arch_boot(start_info) */
	call	arch_boot
2:	cli
	hlt
	jmp	2b

/*
 * Application processors arrive here from the trampoline, in long mode on the boot page
 * tables with a temporary GDT. Find our stack by APIC ID (CPUID leaf 0xb, or leaf 1 when
 * 0xb is absent), then ap_kernel(ap_entry, cpu).
 */
	.globl ap_start64
ap_start64:
	xorl	%eax, %eax
	movl	%eax, %fs
	movl	%eax, %gs
	cpuid
	cmpl	$0xb, %eax
	jb	3f
	movl	$0xb, %eax
	xorl	%ecx, %ecx
	cpuid
	movl	%edx, %ebx			/* x2APIC ID */
	jmp	4f
3:	movl	$1, %eax
	cpuid
	shrl	$24, %ebx			/* initial APIC ID */
4:	cmpl	$MAX_APIC_ID, %ebx
	jae	ap_halt
	shlq	$4, %rbx
	leaq	ap_boot_table(%rip), %rax
	movq	(%rax, %rbx), %rsp		/* stack top */
	movq	8(%rax, %rbx), %rdi		/* struct cpu * */
	testq	%rsp, %rsp
	jz	ap_halt
	leaq	ap_entry(%rip), %r12
	jmp	ap_kernel

/*
 * Application processors plugvm started directly (smp.c, kick_direct) arrive here in long
 * mode with RSP = their stack top, RDI = their struct cpu and GS base = the same: no lookup
 * by APIC ID (whose CPUIDs are exits on hardware), GS left alone; then
 * ap_kernel(ap_entry_direct, cpu).
 */
	.globl ap_direct64
ap_direct64:
	leaq	ap_entry_direct(%rip), %r12

/*
 * Both: with RSP and RDI (the struct cpu) set, load the kernel GDT and its data and code
 * segments, and call *%r12 (cpu), which never returns.
 */
ap_kernel:
	lgdt	boot_gdt_desc
	movl	$GDT_KERNEL_DS, %eax
	movl	%eax, %ss
	xorl	%eax, %eax
	movl	%eax, %ds
	movl	%eax, %es
	/* Far return into the 64-bit kernel code segment of the kernel GDT. */
	pushq	$GDT_KERNEL_CS
	leaq	6f(%rip), %rax
	pushq	%rax
	lretq
6:	xorl	%ebp, %ebp
	call	*%r12
ap_halt:
	cli
	hlt
	jmp	ap_halt

	.section .data
	.balign 16
	.globl boot_gdt
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff		/* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff		/* 0x10: data */
	.quad 0x00cf9a000000ffff		/* 0x18: 32-bit code */
boot_gdt_end:
	.globl boot_gdt_desc
boot_gdt_desc:
	.word boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

/* Identity map of the low 4 GiB with 2 MiB pages; the top GiB (MMIO) uncached. */
	.balign 4096
	.globl boot_pml4
boot_pml4:
	.quad boot_pdpt + 0x3
	.fill 511, 8, 0
boot_pdpt:
	.quad boot_pd + 0x3
	.quad boot_pd + 0x1000 + 0x3
	.quad boot_pd + 0x2000 + 0x3
	.quad boot_pd + 0x3000 + 0x3
	.fill 508, 8, 0
boot_pd:
	.set addr, 0
	.rept 1536
	.quad addr + 0x83			/* present, writable, 2 MiB */
	.set addr, addr + 0x200000
	.endr
	.rept 512
	.quad addr + 0x9b			/* ... plus PWT | PCD */
	.set addr, addr + 0x200000
	.endr

	.section .bss
	.balign 16
	.globl boot_stack
boot_stack:
	.skip BOOT_STACK_SIZE
	.globl boot_stack_top
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
