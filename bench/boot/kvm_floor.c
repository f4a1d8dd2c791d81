// SPDX-License-Identifier: MIT
/*
 * The floor of a boot: the least a KVM process must do to run what plugvm runs, with raw
 * <linux/kvm.h> and no plugvm code. The same setup plugvm cannot skip, in KVM's cheap order:
 * open /dev/kvm, read the supported CPUID, create the VM (TSS and identity-map addresses),
 * one memory slot of the guest's size (before the irqchip: ~7 ms less, docs/design.md),
 * the in-kernel irqchip; then N vCPUs, each on its own thread with its CPUID (the supported
 * list; vCPU 0 reads the TSC rate as plugvm does) and 32-bit flat protected mode at a PVH-style
 * entry (`out %al, $0xf4`), RUNNABLE, run to its first exit (KVM_EXIT_IO); then exit (the
 * kernel tears the VM down as the process ends, as it does for plugvm).
 * Usage: kvm_floor [N [MiB]] (default 1 vCPU, 128 MiB). Exit 0 on success.
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

#define FLOOR_ENTRY	0x100000ul /* where a PVH kernel starts: 1 MiB */
#define FLOOR_PORT	0xf4 /* the first exit: `out %al, $0xf4` (isa-debug-exit's port) */
#define FLOOR_TSS	0xfeffd000ul /* plugvm's KVM_SET_TSS_ADDR; the identity map below it */
#define FLOOR_MAX_VCPUS 1024
#define FLOOR_MAX_CPUID 256

struct floor_vcpu {
	unsigned long id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	int err; /* 0, or errno of the failing step */
	const char *what; /* the failing step when err != 0 */
};

static int kvm_fd, vm_fd;
static size_t run_size;
static struct kvm_cpuid2 *cpuid;

static void die(const char *what, int err)
{
	fprintf(stderr, "kvm_floor: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct kvm_segment flat_seg(uint16_t sel, uint8_t type)
{
	return (struct kvm_segment){ .limit = 0xffffffff,
				     .selector = sel,
				     .type = type,
				     .present = 1,
				     .db = 1,
				     .s = 1,
				     .g = 1 };
}

/* Thread body: CPUID, PVH-style registers, RUNNABLE, KVM_RUN to the first exit. */
static void *vcpu_main(void *arg)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct floor_vcpu *v = arg;
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	/* plugvm reads the rate on its first vCPU to advertise it in every vCPU's CPUID. */
	if (v->id == 0 && ioctl(v->fd, KVM_GET_TSC_KHZ, 0) <= 0) {
		v->what = "KVM_GET_TSC_KHZ";
		goto fail;
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0) {
		v->what = "KVM_SET_CPUID2";
		goto fail;
	}
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0) {
		v->what = "KVM_GET_SREGS";
		goto fail;
	}
	sregs.cs = flat_seg(0x8, 0xb);
	sregs.ds = flat_seg(0x10, 0x3);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.tr =
	    (struct kvm_segment){ .limit = 0x67, .selector = 0x18, .type = 0xb, .present = 1 };
	sregs.cr0 = 0x11; /* PE ET */
	sregs.cr4 = 0;
	sregs.efer = 0;
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
	/* With the in-kernel irqchip only vCPU 0 starts RUNNABLE; the others wait for SIPI. */
	if (v->id && ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0) {
		v->what = "KVM_SET_MP_STATE";
		goto fail;
	}
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			v->what = "KVM_RUN";
			goto fail;
		}
		if (v->run->exit_reason == KVM_EXIT_IO && v->run->io.port == FLOOR_PORT)
			return NULL;
		v->what = "KVM_RUN: unexpected exit (not the `out` to port 0xf4)";
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
	uint64_t identity_map = FLOOR_TSS - 0x1000;
	unsigned long n = 1, mib = 128, i;
	struct floor_vcpu *vcpus;
	size_t mem_bytes;
	uint8_t *mem;
	int r, status = 0;

	if (argc > 3 ||
	    (argc >= 2 && (sscanf(argv[1], "%lu", &n) != 1 || n == 0 || n > FLOOR_MAX_VCPUS)) ||
	    (argc == 3 && (sscanf(argv[2], "%lu", &mib) != 1 || mib < 2 || mib > 3072))) {
		fprintf(stderr,
			"usage: kvm_floor [N [MiB]]  (1 <= N <= %d vCPUs, 2 <= MiB <= 3072 of "
			"guest RAM; default 1 vCPU, 128 MiB)\n",
			FLOOR_MAX_VCPUS);
		return 2;
	}
	mem_bytes = mib << 20;
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("/dev/kvm", errno);
	r = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r < (int)sizeof(struct kvm_run))
		die("KVM_GET_VCPU_MMAP_SIZE", r < 0 ? errno : EINVAL);
	run_size = (size_t)r;
	cpuid = calloc(1, sizeof(*cpuid) + FLOOR_MAX_CPUID * sizeof(cpuid->entries[0]));
	if (!cpuid)
		die("calloc", ENOMEM);
	cpuid->nent = FLOOR_MAX_CPUID;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0)
		die("KVM_GET_SUPPORTED_CPUID", errno);

	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM", errno);
	if (ioctl(vm_fd, KVM_SET_TSS_ADDR, FLOOR_TSS) < 0)
		die("KVM_SET_TSS_ADDR", errno);
	if (ioctl(vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &identity_map) < 0)
		die("KVM_SET_IDENTITY_MAP_ADDR", errno);
	mem = mmap(NULL, mem_bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory", errno);
	mem[FLOOR_ENTRY] = 0xe6; /* out %al, $FLOOR_PORT */
	mem[FLOOR_ENTRY + 1] = FLOOR_PORT;
	mem[FLOOR_ENTRY + 2] = 0xf4; /* hlt, never reached */
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = mem_bytes,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};
	/* The slot before the irqchip: after it, the first slot waits for a grace period. */
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION", errno);
	if (ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		die("KVM_CREATE_IRQCHIP", errno);

	vcpus = calloc(n, sizeof(*vcpus));
	if (!vcpus)
		die("calloc", ENOMEM);
	for (i = 0; i < n; i++) {
		vcpus[i].id = i;
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
