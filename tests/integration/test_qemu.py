# SPDX-License-Identifier: MIT
"""The same guest.elf on stock QEMU/KVM (`pc` machine): boot, self-tests, power-off paths."""
import pytest

from qmp import Qmp, wait_socket
from vm import QEMU_TIMEOUT, qemu, selftests

# QEMU's start and its emulated firmware: 10 s and more each here.
pytestmark = pytest.mark.slow


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


def test_qemu_cpu_hotplug_through_its_qmp(tmp_path):
    # The guest's one ACPI hotplug driver, unchanged, on QEMU's own device, driven through
    # QEMU's own QMP: slot types and props come from query-hotpluggable-cpus, as QEMU says.
    path = str(tmp_path / "qemu.qmp")
    with qemu("-smp", "1,maxcpus=4", "--qmp", path, "--append", "") as vm:
        vm.wait_for(r"^acpi-hotplug: ready", timeout=QEMU_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            slots = [s for s in q.cmd("query-hotpluggable-cpus") if "qom-path" not in s]
            assert len(slots) == 3
            for n, slot in enumerate(sorted(slots, key=lambda s: s["props"]["core-id"])):
                q.cmd("device_add", dict(slot["props"], driver=slot["type"], id=f"cpu{n}"))
                ev = q.wait_event("ACPI_DEVICE_OST", QEMU_TIMEOUT)
                assert ev["data"]["info"]["status"] == 0, ev
                core = slot["props"]["core-id"]
                vm.wait_for(rf"^acpi-hotplug: slot {core}: cpu {core} online \(0\)$",
                            timeout=QEMU_TIMEOUT)
            assert len(q.cmd("query-cpus-fast")) == 4
            for n in (1, 0):
                q.cmd("device_del", {"id": f"cpu{n}"})
                while True:
                    ev = q.wait_event("DEVICE_DELETED", QEMU_TIMEOUT)
                    if ev["data"].get("device") == f"cpu{n}":
                        break  # QEMU first reports the CPU's LAPIC child
            assert len(q.cmd("query-cpus-fast")) == 2
            # QEMU's power button reaches the same guest driver.
            q.cmd("system_powerdown")
            assert q.wait_event("SHUTDOWN", QEMU_TIMEOUT)["data"]["guest"] is True
        assert vm.wait_exit(timeout=QEMU_TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^acpi: power button: powering off$"), vm.transcript()
