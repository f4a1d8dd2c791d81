// SPDX-License-Identifier: MIT
/*
 * One VM's handles (vm.h) and its stop protocol: the first request decides the exit
 * status and wakes the main loop. Everything that builds or runs the VM is machine.c's.
 */
#include "vm.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"

int vm_init(struct vm *vm, const struct vm_config *cfg)
{
	memset(vm, 0, sizeof(*vm));
	vm->cfg = cfg;
	atomic_store(&vm->on_poweroff, (int)cfg->on_poweroff);
	atomic_store(&vm->on_reset, (int)cfg->on_reset);
	vm->kvm.dev_fd = vm->kvm.vm_fd = -1;
	vm->pio.name = "pio";
	vm->mmio.name = "mmio";
	pthread_mutex_init(&vm->stop_lock, NULL);
	vm->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->stop_fd < 0) {
		log_error("eventfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

void vm_fini(struct vm *vm)
{
	if (vm->stop_fd >= 0)
		close(vm->stop_fd);
	vm->stop_fd = -1;
	pthread_mutex_destroy(&vm->stop_lock);
}

void vm_request_stop(struct vm *vm, int status)
{
	uint64_t one = 1;

	pthread_mutex_lock(&vm->stop_lock);
	if (!atomic_load(&vm->stop_requested)) {
		vm->exit_status = status;
		atomic_store(&vm->stop_requested, true);
		if (write(vm->stop_fd, &one, sizeof(one)) < 0)
			log_error("stop eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&vm->stop_lock);
}

void vm_request_reset(struct vm *vm)
{
	uint64_t one = 1;

	atomic_store(&vm->reset_requested, true);
	if (write(vm->stop_fd, &one, sizeof(one)) < 0)
		log_error("stop eventfd: %s", strerror(errno));
}

static void wake(struct vm *vm)
{
	uint64_t one = 1;

	if (write(vm->stop_fd, &one, sizeof(one)) < 0)
		log_error("stop eventfd: %s", strerror(errno));
}

void vm_guest_poweroff(struct vm *vm)
{
	if (atomic_load(&vm->on_poweroff) != ACTION_PAUSE) {
		vm_request_stop(vm, 0);
		return;
	}
	atomic_store(&vm->poweroff_requested, true);
	wake(vm);
}

void vm_guest_reset(struct vm *vm)
{
	if (atomic_load(&vm->on_reset) == ACTION_RESET) {
		atomic_store(&vm->reset_by_guest, true);
		vm_request_reset(vm);
		return;
	}
	log_info("guest requested a reset; the reboot action is to shut down");
	atomic_store(&vm->reset_shutdown, true);
	vm_guest_poweroff(vm);
}

bool vm_take_poweroff(struct vm *vm)
{
	uint64_t n;

	if (!atomic_exchange(&vm->poweroff_requested, false))
		return false;
	if (read(vm->stop_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("stop eventfd: %s", strerror(errno));
	return true;
}

bool vm_take_reset(struct vm *vm)
{
	uint64_t n;

	if (!atomic_exchange(&vm->reset_requested, false))
		return false;
	if (read(vm->stop_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("stop eventfd: %s", strerror(errno));
	return true;
}

bool vm_stopping(struct vm *vm)
{
	/* Polled by every vCPU loop and the main loop: no lock, one atomic load. */
	return atomic_load(&vm->stop_requested);
}

int vm_exit_status(struct vm *vm)
{
	int status;

	pthread_mutex_lock(&vm->stop_lock);
	status = vm->exit_status;
	pthread_mutex_unlock(&vm->stop_lock);
	return status;
}

bool vm_has_machine(const struct vm *vm)
{
	return vm->cpus != NULL;
}
