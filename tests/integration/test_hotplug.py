# SPDX-License-Identifier: MIT
"""vCPU hot-add and hot-remove on the real VMM through QMP: device_add creates (or unparks)
the vCPU and raises the SCI, the guest's ACPI driver brings the CPU up through cpuhp and
reports _OST; device_del asks, the guest takes the CPU down and ejects it, the VMM parks it
and says DEVICE_DELETED. Both views (the VMM's and the guest's console) are checked at every
step, in several orders, with re-use of parked vCPUs, and the errors QEMU gives.
"""
import os

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, plugvm

TIMEOUT = 3 * BOOT_TIMEOUT


def start(tmp_path, smp):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", smp, "--qmp", path, "--append", "")
    vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
    wait_socket(path)
    return vm, Qmp(path)


def add(q, vm, core, seen):
    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}", "socket-id": 0,
                         "core-id": core, "thread-id": 0})
    ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ev["data"]["info"] == {"source": 1, "status": 0, "slot": str(core),
                                  "slot-type": "CPU"}, ev
    seen[core] = seen.get(core, 0) + 1
    lines = vm.lines(rf"^acpi-hotplug: slot {core}: cpu {core} online \(0\)$")
    assert len(lines) == seen[core], vm.transcript()


def remove(q, vm, core):
    q.cmd("device_del", {"id": f"cpu{core}"})
    ev = q.wait_event("DEVICE_DELETED", TIMEOUT)
    assert ev["data"] == {"device": f"cpu{core}", "path": f"/machine/peripheral/cpu{core}"}
    ost = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ost["data"]["info"]["source"] == 3 and ost["data"]["info"]["status"] == 0, ost


def vmm_view(q):
    return sorted(c["props"]["core-id"] for c in q.cmd("query-cpus-fast"))


def test_add_up_to_max_and_back_in_several_orders(tmp_path):
    vm, q = start(tmp_path, "1,maxcpus=4")
    with vm, q:
        pid = vm.proc.pid
        tasks = len(os.listdir(f"/proc/{pid}/task"))
        seen = {}
        for core in (1, 2, 3):
            add(q, vm, core, seen)
            assert vmm_view(q) == list(range(core + 1))
        assert len(os.listdir(f"/proc/{pid}/task")) == tasks + 3
        slots = q.cmd("query-hotpluggable-cpus")
        assert all("qom-path" in s for s in slots)
        for core in (2, 3, 1):  # not the order they came in
            remove(q, vm, core)
            assert core not in vmm_view(q)
        assert vmm_view(q) == [0]
        assert len(os.listdir(f"/proc/{pid}/task")) == tasks
        # Parked vCPUs come back (their fds are reused), in yet another order.
        for core in (3, 1):
            add(q, vm, core, seen)
        assert vmm_view(q) == [0, 1, 3]
        remove(q, vm, 3)
        add(q, vm, 2, seen)
        assert vmm_view(q) == [0, 1, 2]
        assert q.cmd("query-status")["running"]
        q.cmd("quit")
        assert vm.wait_exit() == 0


def test_hotplug_errors(tmp_path):
    vm, q = start(tmp_path, "2,maxcpus=4")
    with vm, q:
        def error(name, args):
            r = q.execute(name, args)
            assert "error" in r, r
            return r["error"]

        cpu = {"driver": "host-x86_64-cpu", "socket-id": 0, "thread-id": 0}
        assert error("device_add", dict(cpu, **{"core-id": 1}))["desc"] == \
            "CPU[1] with APIC ID 1 exists"
        assert "must be in range 0:3" in error("device_add", dict(cpu, **{"core-id": 4}))["desc"]
        assert "must be in range 0:0" in error("device_add", dict(cpu, **{"core-id": 2,
                                                                       "socket-id": 1}))["desc"]
        assert "'core-id' is missing" in error("device_add", {"driver": "host-x86_64-cpu",
                                                              "socket-id": 0,
                                                              "thread-id": 0})["desc"]
        assert "not a valid device model" in error("device_add", {"driver": "e1000"})["desc"]
        assert "'driver' is missing" in error("device_add", {"id": "x"})["desc"]
        assert "expected: integer" in error("device_add", dict(cpu, **{"core-id": "2"}))["desc"]
        assert "identifier" in error("device_add", dict(cpu, **{"core-id": 2,
                                                                "id": "9bad"}))["desc"]
        assert error("device_del", {"id": "/machine/unattached/device[0]"})["desc"] == \
            "Boot CPU is unpluggable"
        assert error("device_del", {"id": "nosuch"})["class"] == "DeviceNotFound"
        assert "'id' is missing" in error("device_del", {})["desc"]
        # A boot CPU other than the first can go, by its QOM path, as in QEMU.
        q.cmd("device_del", {"id": "/machine/unattached/device[1]"})
        ev = q.wait_event("DEVICE_DELETED", TIMEOUT)
        assert ev["data"] == {"path": "/machine/unattached/device[1]"}
        assert error("device_del", {"id": "/machine/unattached/device[1]"})["class"] == \
            "DeviceNotFound"
        # Nothing above disturbed the VM.
        assert vmm_view(q) == [0]
        q.cmd("device_add", dict(cpu, **{"core-id": 1, "id": "again"}))
        assert q.wait_event("ACPI_DEVICE_OST", TIMEOUT)["data"]["info"]["status"] == 0
        assert vmm_view(q) == [0, 1]
        q.cmd("quit")
        assert vm.wait_exit() == 0
