// SPDX-License-Identifier: MIT
/* vCPU register state: PVH entry, register dumps for crashes, address translation. */
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cpu.h"

#define CR0_PE (1ull << 0)
#define CR0_ET (1ull << 4)

/* A flat 4 GiB segment; `code64` makes a 64-bit code segment (L set, D clear). */
static struct kvm_segment flat_seg(uint16_t sel, uint8_t type, bool code64)
{
	struct kvm_segment s = {
		.base = 0,
		.limit = 0xffffffff,
		.selector = sel,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = !code64,
		.s = 1,
		.l = code64,
		.g = 1,
	};

	return s;
}

int regs_setup_pvh(int vcpu_fd, uint32_t entry, uint32_t start_info)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return -1;
	sregs.cs = flat_seg(0x8, 0xb, false); /* execute/read, accessed */
	sregs.ds = flat_seg(0x10, 0x3, false); /* read/write, accessed */
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.tr = (struct kvm_segment){
		.base = 0, .limit = 0x67, .selector = 0x18, .type = 0xb, .present = 1
	};
	sregs.cr0 = CR0_PE | CR0_ET;
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return -1;
	memset(&regs, 0, sizeof(regs));
	regs.rip = entry;
	regs.rbx = start_info;
	regs.rflags = 0x2;
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return -1;
	return 0;
}

int regs_setup_long_mode(int vcpu_fd, const struct long_mode_start *r)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return -1;
	sregs.cs = flat_seg(0x08, 0xb, true);
	sregs.ds = flat_seg(0x10, 0x3, false);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.gs.base = r->gs_base;
	sregs.cr0 = 0x80050033; /* PG WP NE ET MP PE */
	sregs.cr3 = r->cr3;
	sregs.cr4 = 0x20; /* PAE */
	sregs.efer = 0xd00; /* NXE LMA LME */
	memset(&regs, 0, sizeof(regs));
	regs.rip = r->entry;
	regs.rsp = r->stack;
	regs.rdi = r->arg;
	regs.rflags = 0x2;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs) < 0 || ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return -1;
	return 0;
}

int64_t regs_translate(int vcpu_fd, uint64_t la)
{
	struct kvm_translation tr = { .linear_address = la };

	if (ioctl(vcpu_fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
		return -1;
	return (int64_t)tr.physical_address;
}

static void seg(FILE *f, const char *name, const struct kvm_segment *s)
{
	fprintf(f, "  %-3s sel=%04x base=%016llx limit=%08x type=%x p=%u dpl=%u db=%u l=%u g=%u\n",
		name, s->selector, (unsigned long long)s->base, s->limit, s->type, s->present,
		s->dpl, s->db, s->l, s->g);
}

void regs_dump(FILE *f, int vcpu_fd, int vcpu_id, const uint8_t *insn, unsigned insn_len)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	unsigned i;

	fprintf(f, "plugvm: vCPU %d registers:\n", vcpu_id);
	if (ioctl(vcpu_fd, KVM_GET_REGS, &r) == 0) {
		const struct {
			const char *name;
			unsigned long long v;
		} gpr[16] = {
			{ "rax", r.rax }, { "rbx", r.rbx }, { "rcx", r.rcx }, { "rdx", r.rdx },
			{ "rsi", r.rsi }, { "rdi", r.rdi }, { "rbp", r.rbp }, { "rsp", r.rsp },
			{ "r8 ", r.r8 },  { "r9 ", r.r9 },  { "r10", r.r10 }, { "r11", r.r11 },
			{ "r12", r.r12 }, { "r13", r.r13 }, { "r14", r.r14 }, { "r15", r.r15 },
		};

		fprintf(f, "  rip=%016llx rflags=%016llx\n", (unsigned long long)r.rip,
			(unsigned long long)r.rflags);
		/* Four to a line, as printed since the first dump (tests match the lines). */
		for (i = 0; i < 16; i++)
			fprintf(f, "%s%s=%016llx%s", i % 4 ? " " : "  ", gpr[i].name, gpr[i].v,
				i % 4 == 3 ? "\n" : "");
	}
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &s) == 0) {
		fprintf(f, "  cr0=%016llx cr2=%016llx cr3=%016llx cr4=%016llx efer=%016llx\n",
			(unsigned long long)s.cr0, (unsigned long long)s.cr2,
			(unsigned long long)s.cr3, (unsigned long long)s.cr4,
			(unsigned long long)s.efer);
		seg(f, "cs", &s.cs);
		seg(f, "ss", &s.ss);
		seg(f, "ds", &s.ds);
		seg(f, "gs", &s.gs);
		seg(f, "tr", &s.tr);
		fprintf(f, "  gdt=%016llx/%04x idt=%016llx/%04x apic_base=%016llx\n",
			(unsigned long long)s.gdt.base, s.gdt.limit, (unsigned long long)s.idt.base,
			s.idt.limit, (unsigned long long)s.apic_base);
	}
	if (insn && insn_len) {
		fprintf(f, "  code at rip:");
		for (i = 0; i < insn_len; i++)
			fprintf(f, " %02x", insn[i]);
		fprintf(f, "\n");
	}
	fflush(f);
}
