# SPDX-License-Identifier: MIT
"""The guest's ACPI driver on every machine it meets: QEMU `q35` (ICH9 hotplug block at
0x0cd8, found from the FADT), QEMU `microvm` (hardware-reduced: no CPU hotplug, power button
through the GED), plugvm's `--machine pc` and `--machine q35` (the same two layouts as QEMU's),
and CPUs inserted while the VM is paused (-S, device_add, cont) on QEMU and plugvm alike,
which the driver finds when it starts."""
import re

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, QEMU_TIMEOUT, plugvm, qemu, run_selftests


def _slots(q):
    return sorted((s for s in q.cmd("query-hotpluggable-cpus") if "qom-path" not in s),
                  key=lambda s: s["props"]["core-id"])


def _add(q, slot, name):
    q.cmd("device_add", dict(slot["props"], driver=slot["type"], id=name))


def test_qemu_q35_paused_hot_add_hotplug_and_power_button(tmp_path):
    # One q35 VM for every check: a CPU added while paused (before the firmware even ran)
    # comes online at boot; a live device_add and device_del go through the ICH9 block the
    # guest found from the FADT; QEMU's power button powers it off.
    path = str(tmp_path / "qemu.qmp")
    with qemu("--machine", "q35", "-smp", "1,maxcpus=3", "--qmp", path,
              "--append", "", "--", "-S") as vm:
        wait_socket(path)
        with Qmp(path) as q:
            first, second = _slots(q)
            _add(q, first, "cpu1")
            q.cmd("cont")
            vm.wait_for(r"^acpi-hotplug: ready \(q35 \(ICH9\) block at 0xcd8, 3 slots",
                        timeout=QEMU_TIMEOUT)
            # QEMU's firmware builds the MADT after cont: the CPU is a boot CPU there.
            assert vm.lines(r"^plugvm-guest: 2/2 CPUs online$"), vm.transcript()
            _add(q, second, "cpu2")
            ev = q.wait_event("ACPI_DEVICE_OST", QEMU_TIMEOUT)
            assert ev["data"]["info"]["status"] == 0, ev
            vm.wait_for(r"^acpi-hotplug: slot 2: cpu 2 online \(0\)$", timeout=QEMU_TIMEOUT)
            assert len(q.cmd("query-cpus-fast")) == 3
            q.cmd("device_del", {"id": "cpu2"})
            while q.wait_event("DEVICE_DELETED", QEMU_TIMEOUT)["data"].get("device") != "cpu2":
                pass  # QEMU first reports the CPU's LAPIC child
            assert len(q.cmd("query-cpus-fast")) == 2
            q.cmd("system_powerdown")
            assert q.wait_event("SHUTDOWN", QEMU_TIMEOUT)["data"]["guest"] is True
        assert vm.wait_exit(timeout=QEMU_TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^acpi: power button: powering off$"), vm.transcript()
        assert not vm.lines(r"CPU hotplug off"), vm.transcript()


def test_qemu_microvm_power_button_through_the_ged(tmp_path):
    path = str(tmp_path / "qemu.qmp")
    with qemu("--machine", "microvm", "-smp", "2", "--qmp", path, "--append", "") as vm:
        vm.wait_for(r"^acpi-hotplug: ready \(no CPU hotplug, power button GED\)$",
                    timeout=QEMU_TIMEOUT)
        vm.wait_for(r"^plugvm-guest: 2/2 CPUs online$", timeout=QEMU_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            q.cmd("system_powerdown")
            assert q.wait_event("SHUTDOWN", QEMU_TIMEOUT)["data"]["guest"] is True
        assert vm.wait_exit(timeout=QEMU_TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^acpi: power button: powering off$"), vm.transcript()
        # Said once, and not as a failure.
        assert len(vm.lines(r"no CPU hotplug")) == 2, vm.transcript()  # + the ready line
        assert not vm.lines(r"CPU hotplug off"), vm.transcript()


@pytest.mark.parametrize("machine,block", [
    ("pc", r"pc \(PIIX4\) block at 0xaf00"),
    ("pc-i440fx-7.2", r"pc \(PIIX4\) block at 0xaf00"),
    ("q35", r"q35 \(ICH9\) block at 0xcd8"),
    ("pc-q35-7.2", r"q35 \(ICH9\) block at 0xcd8"),
])
@pytest.mark.parametrize("pv", [0, 1])
def test_plugvm_machine_layout_hot_add_remove_and_power_button(tmp_path, machine, block, pv):
    # The guest finds the machine's block from plugvm's FADT as it does on QEMU's; a vCPU
    # comes and goes through it (the SCI through that machine's GPE0; with pv=1 through
    # plugvm's paravirt port, the MSI instead of the SCI), again after a system_reset, and
    # the power button powers the guest off.
    path = str(tmp_path / "qmp.sock")
    through = "; CPU hotplug through plugvm's paravirt port" if pv else ""
    with plugvm("--machine", machine, "--smp", "1,maxcpus=3", "--qmp", path,
                "--append", f"acpi_hotplug.pv={pv}") as vm:
        vm.wait_for(rf"^acpi-hotplug: ready \({block}, 3 slots, SCI on GSI 9, power button "
                    rf"PM1{re.escape(through)}\)$", timeout=BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            slots = {s["props"]["core-id"]: s for s in q.cmd("query-hotpluggable-cpus")}
            _add(q, slots[2], "cpu2")
            ev = q.wait_event("ACPI_DEVICE_OST", BOOT_TIMEOUT)
            assert ev["data"]["info"] == {"device": "cpu2", "source": 1, "status": 0,
                                          "slot": "2", "slot-type": "CPU"}, ev
            vm.wait_for(r"^acpi-hotplug: slot 2: cpu 2 online \(0\)$", timeout=BOOT_TIMEOUT)
            assert [c["props"]["core-id"] for c in q.cmd("query-cpus-fast")] == [0, 2]
            q.cmd("device_del", {"id": "cpu2"})
            ev = q.wait_event("DEVICE_DELETED", BOOT_TIMEOUT)
            assert ev["data"] == {"device": "cpu2", "path": "/machine/peripheral/cpu2"}, ev
            assert [c["props"]["core-id"] for c in q.cmd("query-cpus-fast")] == [0]
            # After a reset the guest finds the same block again, and its SCI still works
            # (the GPE0 block's enables are back at power-on state until the driver sets
            # them).
            q.cmd("system_reset")
            q.wait_event("RESET", BOOT_TIMEOUT)
            vm.wait_count(rf"^acpi-hotplug: ready \({block}, 3 slots", 2, BOOT_TIMEOUT)
            _add(q, slots[1], "cpu1")
            vm.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$", timeout=BOOT_TIMEOUT)
            q.cmd("system_powerdown")
            assert q.wait_event("SHUTDOWN", BOOT_TIMEOUT)["data"]["guest"] is True
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^acpi: power button: powering off$"), vm.transcript()
        assert not vm.lines(r"CPU hotplug off|warning: acpi"), vm.transcript()


def test_plugvm_paused_hot_add_comes_online_at_driver_start(tmp_path):
    # What libvirt does for <vcpus> entries enabled and hotpluggable: -S, device_add, cont.
    path = str(tmp_path / "qmp.sock")
    with plugvm("-S", "--smp", "1,maxcpus=4", "--qmp", path, "--append", "") as vm:
        wait_socket(path)
        with Qmp(path) as q:
            # Under -S plugvm may list the boot CPU without a qom-path yet: pick the slots
            # by core-id.
            slots = {s["props"]["core-id"]: s for s in q.cmd("query-hotpluggable-cpus")}
            for n in (1, 2):
                _add(q, slots[n], f"cpu{n}")
            q.cmd("cont")
            for cpu in (1, 2):
                vm.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$",
                            timeout=BOOT_TIMEOUT)
            q.cmd("system_powerdown")
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_acpi_cphp_selftests_hold_in_either_order(machine):
    # acpi_cphp compares the block with the kernel's present mask, so an eject earlier in
    # the same boot (acpi_cphp_eject) does not make it fail; on either machine's block.
    for names, present in ((["acpi_cphp_eject", "acpi_cphp"], 2),
                           (["acpi_cphp", "acpi_cphp_eject"], 3)):
        vm = run_selftests(names, "--machine", machine, "--smp", "3,maxcpus=4", "--qmp",
                           "none")
        assert vm.lines(rf"^selftest acpi_cphp: slots=4 present={present}$"), vm.transcript()
