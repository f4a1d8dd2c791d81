# SPDX-License-Identifier: MIT
"""The same guest.elf on stock QEMU/KVM (`pc` machine): boot, self-tests, power-off paths."""
import pytest

from vm import QEMU_TIMEOUT, qemu, selftests


def test_qemu_boots_the_guest_with_4_cpus():
    with qemu("-smp", "4", "--append", "selftest=all") as vm:
        vm.wait_for(r"^plugvm-guest: 4/4 CPUs online$", timeout=QEMU_TIMEOUT)
        rc = vm.wait_exit(timeout=QEMU_TIMEOUT)
        results = selftests(vm)
        assert rc == 0, vm.transcript()
        assert {"percpu", "apic", "tsc", "acpi", "mm"} <= set(results), vm.transcript()
        assert all(r == "pass" for r in results.values()), results
        # No plugvm CPUID leaf on QEMU: the TSC rate comes from elsewhere.
        assert not vm.lines(r"^selftest tsc: .* source=plugvm "), vm.transcript()


def test_qemu_possible_cpus_and_halt():
    with qemu("-smp", "2,maxcpus=6", "--append", "halt selftest=acpi,acpi_cphp") as vm:
        assert vm.wait_exit(timeout=QEMU_TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^plugvm-guest: 6 possible CPUs, 2 present"), vm.transcript()
        assert vm.lines(r"^plugvm-guest: 2/2 CPUs online$"), vm.transcript()
        assert selftests(vm) == {"acpi": "pass", "acpi_cphp": "pass"}
        # QEMU's real block is the reference for plugvm's (test_boot.py runs the same).
        assert vm.lines(r"^selftest acpi_cphp: slots=6 present=2$"), vm.transcript()


@pytest.mark.parametrize("cmdline,status,pattern", [
    ("crash=ud", (2 << 1) | 1, r"^PANIC: cpu 0: exception #UD invalid opcode \(vector 6\)"),
    ("selftest=nosuchtest", (1 << 1) | 1, r"^selftest nosuchtest: fail unknown test"),
])
def test_qemu_failure_status_through_debug_exit(cmdline, status, pattern):
    with qemu("-smp", "2", "--append", cmdline) as vm:
        assert vm.wait_exit(timeout=QEMU_TIMEOUT) == status, vm.transcript()
        assert vm.lines(pattern), vm.transcript()
