// SPDX-License-Identifier: MIT
/* /dev/kvm, the VM fd, memory slots and the in-kernel irqchip. */
#include "kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "chaos.h"
#include "log.h"
#include "x86/layout.h"

#define CPUID_MAX_ENTRIES 256

static int check_cap(struct kvm *k, long cap)
{
	int r = ioctl(k->dev_fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? 0 : r;
}

/* KVM_CAP_MAX_VCPUS, else KVM_CAP_NR_VCPUS, else KVM's documented minimum. */
static unsigned max_vcpus(struct kvm *k)
{
	unsigned n = (unsigned)check_cap(k, KVM_CAP_MAX_VCPUS);

	if (!n)
		n = (unsigned)check_cap(k, KVM_CAP_NR_VCPUS);
	return n ? n : 4;
}

int kvm_probe(const char *dev_path, unsigned *max)
{
	struct kvm k = { .vm_fd = -1 };
	int err = 0;

	k.dev_fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (k.dev_fd < 0)
		return -errno;
	if (ioctl(k.dev_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		err = -ENOTSUP;
	else
		*max = max_vcpus(&k);
	close(k.dev_fd);
	return err;
}

static int get_supported_cpuid(struct kvm *k)
{
	size_t sz = sizeof(struct kvm_cpuid2) + CPUID_MAX_ENTRIES * sizeof(struct kvm_cpuid_entry2);

	k->supported_cpuid = calloc(1, sz);
	if (!k->supported_cpuid)
		return -ENOMEM;
	k->supported_cpuid->nent = CPUID_MAX_ENTRIES;
	if (ioctl(k->dev_fd, KVM_GET_SUPPORTED_CPUID, k->supported_cpuid) < 0) {
		int err = errno;

		log_error("/dev/kvm: KVM_GET_SUPPORTED_CPUID: %s", strerror(err));
		return -err;
	}
	return 0;
}

int kvm_open(struct kvm *k, const char *dev_path)
{
	static const struct {
		long cap;
		const char *name;
	} required[] = {
		{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
		{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
		{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
		{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
		{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	};
	int r, err;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->vm_fd = -1;
	k->dev_fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (k->dev_fd < 0) {
		err = errno;
		log_error("%s: %s%s", dev_path, strerror(err),
			  err == ENOENT	  ? " (is the kvm module loaded? is this a KVM host?)"
			  : err == EACCES ? " (need read/write access: join the 'kvm' group)"
					  : "");
		return -err;
	}
	r = ioctl(k->dev_fd, KVM_GET_API_VERSION, 0);
	if (r != KVM_API_VERSION) {
		err = r < 0 ? errno : EINVAL;
		log_error("%s: not a usable KVM device (KVM_GET_API_VERSION: %s)", dev_path,
			  r < 0 ? strerror(err) : "unexpected version");
		goto fail;
	}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!check_cap(k, required[i].cap)) {
			err = ENOTSUP;
			log_error("%s: KVM lacks %s", dev_path, required[i].name);
			goto fail;
		}
	}
	k->max_vcpus = max_vcpus(k);
	k->tsc_deadline = check_cap(k, KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	k->run_size = ioctl(k->dev_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (k->run_size < (int)sizeof(struct kvm_run)) {
		err = errno ? errno : EINVAL;
		log_error("%s: KVM_GET_VCPU_MMAP_SIZE: %s", dev_path, strerror(err));
		goto fail;
	}
	r = get_supported_cpuid(k);
	if (r) {
		err = -r;
		goto fail;
	}
	k->vm_fd = ioctl(k->dev_fd, KVM_CREATE_VM, 0);
	if (k->vm_fd < 0) {
		err = errno;
		log_error("%s: KVM_CREATE_VM: %s", dev_path, strerror(err));
		goto fail;
	}
	/* Real-mode support pages for Intel VMX; harmless elsewhere. Outside guest RAM. */
	if (ioctl(k->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)LAYOUT_KVM_TSS) < 0) {
		err = errno;
		log_error("%s: KVM_SET_TSS_ADDR: %s", dev_path, strerror(err));
		goto fail;
	}
	if (check_cap(k, KVM_CAP_SET_IDENTITY_MAP_ADDR)) {
		uint64_t addr = LAYOUT_KVM_IDENTITY_MAP;

		if (ioctl(k->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &addr) < 0) {
			err = errno;
			log_error("%s: KVM_SET_IDENTITY_MAP_ADDR: %s", dev_path, strerror(err));
			goto fail;
		}
	}
	return 0;
fail:
	kvm_close(k);
	return -err;
}

int kvm_setup_memory_and_irqchip(struct kvm *k, const struct guest_mem *m)
{
	int i;

	for (i = 0; i < m->nr_regions; i++) {
		struct kvm_userspace_memory_region region = {
			.slot = (uint32_t)i,
			.guest_phys_addr = m->regions[i].gpa,
			.memory_size = m->regions[i].size,
			.userspace_addr = (uint64_t)(uintptr_t)m->regions[i].hva,
		};

		if (ioctl(k->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
			int err = errno;

			log_error("KVM_SET_USER_MEMORY_REGION (slot %d, %llu MiB): %s", i,
				  (unsigned long long)(region.memory_size >> 20), strerror(err));
			return -err;
		}
	}
	if (ioctl(k->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		int err = errno;

		log_error("KVM_CREATE_IRQCHIP: %s", strerror(err));
		return -err;
	}
	/* The chips' power-on state (PIC master, slave, IOAPIC), for system_reset. */
	k->irqchip_reset = calloc(3, sizeof(*k->irqchip_reset));
	for (i = 0; k->irqchip_reset && i < 3; i++) {
		k->irqchip_reset[i].chip_id = (uint32_t)i;
		if (ioctl(k->vm_fd, KVM_GET_IRQCHIP, &k->irqchip_reset[i]) < 0) {
			int err = errno;

			log_error("KVM_GET_IRQCHIP: %s", strerror(err));
			return -err;
		}
	}
	if (!k->irqchip_reset) {
		log_error("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int kvm_irqchip_reset(struct kvm *k)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (ioctl(k->vm_fd, KVM_SET_IRQCHIP, &k->irqchip_reset[i]) < 0) {
			int err = errno;

			log_error("KVM_SET_IRQCHIP: %s", strerror(err));
			return -err;
		}
	}
	return 0;
}

int kvm_irq_line_now(void *kvm, uint32_t gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = (uint32_t)level };
	const struct kvm *k = kvm;

	if (ioctl(k->vm_fd, KVM_IRQ_LINE, &irq) < 0)
		return -errno;
	return 0;
}

int kvm_irq_line(struct kvm *k, uint32_t gsi, int level)
{
	if (k->chaos)
		return chaos_irq_line(k->chaos, gsi, level);
	return kvm_irq_line_now(k, gsi, level);
}

int kvm_signal_msi(struct kvm *k, uint32_t dest, uint32_t vector)
{
	/* Address: 0xfee, destination ID in bits 19:12; data: the vector (delivery fixed). */
	struct kvm_msi msi = { .address_lo = 0xfee00000u | (dest & 0xff) << 12,
			       .data = vector & 0xff };

	if (ioctl(k->vm_fd, KVM_SIGNAL_MSI, &msi) < 0)
		return -errno;
	return 0;
}

void kvm_close(struct kvm *k)
{
	if (k->vm_fd >= 0)
		close(k->vm_fd);
	if (k->dev_fd >= 0)
		close(k->dev_fd);
	free(k->supported_cpuid);
	k->supported_cpuid = NULL;
	free(k->irqchip_reset);
	k->irqchip_reset = NULL;
	k->vm_fd = k->dev_fd = -1;
}
