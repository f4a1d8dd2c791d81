// SPDX-License-Identifier: MIT
/*
 * A vCPU's crash: what the guest was doing (registers, the instruction bytes at RIP, a
 * frame-pointer backtrace through its own page tables, every read bounds-checked) on stderr,
 * then the VM's stop with PLUGVM_EXIT_GUEST_CRASH. vcpu.c's exits call it; the SIGQUIT
 * post-mortem uses the dump alone.
 */
#include "vcpu.h"

#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "exitcode.h"
#include "log.h"
#include "vm.h"
#include "x86/cpu.h"

/* Instruction bytes at the vCPU's RIP, from the exit data or guest memory. */
static unsigned fetch_insn(struct vcpu *v, uint8_t *buf, unsigned max)
{
	struct kvm_run *run = v->run;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	int64_t gpa;
	const uint8_t *p;

	if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR &&
	    run->emulation_failure.suberror == KVM_INTERNAL_ERROR_EMULATION &&
	    run->emulation_failure.ndata >= 3 &&
	    (run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) &&
	    run->emulation_failure.insn_size) {
		unsigned n = run->emulation_failure.insn_size;

		if (n > max)
			n = max;
		if (n > sizeof(run->emulation_failure.insn_bytes))
			n = sizeof(run->emulation_failure.insn_bytes);
		memcpy(buf, run->emulation_failure.insn_bytes, n);
		return n;
	}
	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return 0;
	gpa = regs_translate(v->fd, sregs.cs.base + regs.rip);
	if (gpa < 0)
		return 0;
	p = mem_gpa_ptr(&v->vm->mem, (gpa_t)gpa, max);
	if (!p)
		return 0;
	memcpy(buf, p, max);
	return max;
}

/*
 * Follow the guest's frame-pointer chain (the guest keeps frame pointers) and print the
 * return addresses, innermost first, for addr2line. Every read goes through the vCPU's
 * page tables and is bounds-checked: a corrupt chain ends the walk, nothing else.
 */
static void backtrace(FILE *f, struct vcpu *v)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint64_t fp, prev = 0, frame[2];
	unsigned depth;

	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return;
	if (!(sregs.efer & (1u << 10))) /* EFER.LMA: no 64-bit frames before long mode */
		return;
	fprintf(f, "  backtrace: %llx", (unsigned long long)regs.rip);
	fp = regs.rbp;
	for (depth = 0; depth < 24 && fp > prev && !(fp & 7); depth++) {
		int64_t gpa = regs_translate(v->fd, fp);
		const void *p = NULL;

		/* Both words in one page: the next page may map elsewhere. */
		if (gpa >= 0 && ((uint64_t)gpa & 0xfff) <= 0x1000 - sizeof(frame))
			p = mem_gpa_ptr(&v->vm->mem, (gpa_t)gpa, sizeof(frame));
		if (!p)
			break;
		memcpy(frame, p, sizeof(frame));
		if (!frame[1])
			break;
		fprintf(f, " %llx", (unsigned long long)frame[1]);
		prev = fp;
		fp = frame[0];
	}
	fprintf(f, "\n");
}

void vcpu_dump(struct vcpu *v, const uint8_t *insn, unsigned insn_len)
{
	regs_dump(stderr, v->fd, v->id, insn, insn_len);
	backtrace(stderr, v);
	fflush(stderr);
}

void vcpu_crash(struct vcpu *v, const char *what)
{
	uint8_t insn[16];
	unsigned n = fetch_insn(v, insn, sizeof(insn));

	log_error("vCPU %d: %s", v->id, what);
	vcpu_dump(v, insn, n);
	vm_request_stop(v->vm, PLUGVM_EXIT_GUEST_CRASH);
}

void vcpu_crash_internal(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	char what[256];
	int n;
	uint32_t i;

	n = snprintf(what, sizeof(what), "KVM internal error, suberror %u%s",
		     run->internal.suberror,
		     run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION
			 ? " (emulation failure: KVM cannot emulate the instruction below)"
			 : "");
	for (i = 0; i < run->internal.ndata && i < 4 && n < (int)sizeof(what) - 20; i++)
		n += snprintf(what + n, sizeof(what) - (size_t)n, " data[%u]=%#llx", i,
			      (unsigned long long)run->internal.data[i]);
	vcpu_crash(v, what);
}

/*
 * True if the vCPU is at the architectural reset state (CS f000 based at ffff0000, RIP fff0,
 * CR0 0x10): where KVM on AMD SVM leaves a vCPU after a shutdown intercept (the VMCB is
 * undefined then, so it initializes it again), and where no plugvm-loaded guest runs (PVH
 * starts in 32-bit protected mode).
 */
static bool at_reset_state(struct vcpu *v)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_REGS, &r) || ioctl(v->fd, KVM_GET_SREGS, &s))
		return false;
	return r.rip == 0xfff0 && s.cs.selector == 0xf000 && s.cs.base == 0xffff0000 &&
	       s.cr0 == 0x10;
}

void vcpu_crash_shutdown(struct vcpu *v)
{
	if (!at_reset_state(v)) {
		vcpu_crash(v, "guest triple fault (shutdown exit)");
		return;
	}
	log_error("vCPU %d: guest triple fault (shutdown exit); its registers are lost: KVM "
		  "resets a vCPU at a shutdown on AMD SVM",
		  v->id);
	vm_request_stop(v->vm, PLUGVM_EXIT_GUEST_CRASH);
}
