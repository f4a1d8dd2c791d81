// SPDX-License-Identifier: MIT
/*
 * The floor of a boot: the least a KVM process can do to run N vCPUs. Raw <linux/kvm.h>, no
 * plugvm code: open /dev/kvm, create a VM with one memory slot, create N vCPUs, run each on its
 * own thread in real mode at a one-byte guest (`hlt`) until KVM_EXIT_HLT, then exit.
 * No irqchip, so `hlt` exits to userspace. Usage: kvm_floor [N] (default 1). Exit 0 on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define FLOOR_MEM_BYTES 0x10000ul /* one 64 KiB slot at guest physical 0 */
#define FLOOR_ENTRY	0x1000ul /* where the `hlt` sits; CS base 0, IP 0x1000 */
#define FLOOR_MAX_VCPUS 1024

struct floor_vcpu {
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	int err; /* 0, or errno of the failing step */
	const char *what; /* the failing step when err != 0 */
};

static int kvm_fd, vm_fd;
static size_t run_size;

static void die(const char *what, int err)
{
	fprintf(stderr, "kvm_floor: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Thread body: real mode at FLOOR_ENTRY, KVM_RUN until the vCPU's first and only exit. */
static void *vcpu_main(void *arg)
{
	struct floor_vcpu *v = arg;
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0) {
		v->what = "KVM_GET_SREGS";
		goto fail;
	}
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0) {
		v->what = "KVM_SET_SREGS";
		goto fail;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rip = FLOOR_ENTRY;
	regs.rflags = 0x2; /* bit 1 is reserved and must be set */
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0) {
		v->what = "KVM_SET_REGS";
		goto fail;
	}
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			v->what = "KVM_RUN";
			goto fail;
		}
		if (v->run->exit_reason == KVM_EXIT_HLT)
			return NULL;
		v->what = "KVM_RUN: unexpected exit reason (not KVM_EXIT_HLT)";
		v->err = EPROTO;
		return NULL;
	}
fail:
	v->err = errno;
	return NULL;
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region;
	struct floor_vcpu *vcpus;
	unsigned long n = 1;
	uint8_t *mem;
	int r, status = 0;
	unsigned long i;

	if (argc > 2 ||
	    (argc == 2 && (sscanf(argv[1], "%lu", &n) != 1 || n == 0 || n > FLOOR_MAX_VCPUS))) {
		fprintf(stderr, "usage: kvm_floor [N]  (1 <= N <= %d vCPUs)\n", FLOOR_MAX_VCPUS);
		return 2;
	}
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("/dev/kvm", errno);
	r = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r < (int)sizeof(struct kvm_run))
		die("KVM_GET_VCPU_MMAP_SIZE", r < 0 ? errno : EINVAL);
	run_size = (size_t)r;
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM", errno);

	mem =
	    mmap(NULL, FLOOR_MEM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory", errno);
	mem[FLOOR_ENTRY] = 0xf4; /* hlt */
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = FLOOR_MEM_BYTES,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION", errno);

	vcpus = calloc(n, sizeof(*vcpus));
	if (!vcpus)
		die("calloc", ENOMEM);
	for (i = 0; i < n; i++) {
		vcpus[i].fd = ioctl(vm_fd, KVM_CREATE_VCPU, i);
		if (vcpus[i].fd < 0)
			die("KVM_CREATE_VCPU", errno);
		vcpus[i].run =
		    mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpus[i].fd, 0);
		if (vcpus[i].run == MAP_FAILED)
			die("mmap kvm_run", errno);
		r = pthread_create(&vcpus[i].thread, NULL, vcpu_main, &vcpus[i]);
		if (r)
			die("pthread_create", r);
	}
	for (i = 0; i < n; i++) {
		pthread_join(vcpus[i].thread, NULL);
		if (vcpus[i].err) {
			fprintf(stderr, "kvm_floor: vCPU %lu: %s: %s\n", i, vcpus[i].what,
				strerror(vcpus[i].err));
			status = 1;
		}
	}
	return status;
}
