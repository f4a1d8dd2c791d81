/* SPDX-License-Identifier: MIT */
/*
 * The null guest: a PVH kernel that powers off at its first instruction, so booting it
 * measures a hypervisor's own start and stop costs with no guest work in between. One
 * image for every machine: ACPI S5 through the PIIX4-layout PM1a control port 0x604 (plugvm,
 * QEMU pc; SLP_TYP 0), then microvm's hardware-reduced sleep control register (GED MMIO at
 * 0xfea00200; SLP_TYP 5). An access no device claims is ignored on all three.
 */
	.section .note.pvh, "a", @note
	.balign 4
	.long 4			/* name size: "Xen\0" */
	.long 4			/* descriptor size */
	.long 18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long null_entry	/* 32-bit entry, paging off, flat segments */
	.balign 4

	.section .text, "ax"
	.code32
	.globl null_entry
null_entry:
	cli
	movw $0x604, %dx
	movw $0x2000, %ax	/* SLP_EN | SLP_TYP(0) */
	outw %ax, %dx
	movb $0x34, 0xfea00200	/* SLP_EN | SLP_TYP(5) << 2 */
1:	hlt
	jmp 1b
