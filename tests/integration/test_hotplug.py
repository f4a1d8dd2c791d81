# SPDX-License-Identifier: MIT
"""vCPU hot-add and hot-remove on the real VMM through QMP: device_add creates (or unparks)
the vCPU and raises the SCI, the guest's ACPI driver brings the CPU up through cpuhp and
reports _OST; device_del asks, the guest takes the CPU down and ejects it, the VMM parks it
and says DEVICE_DELETED. Both views (the VMM's and the guest's console) are checked at every
step, in several orders, with re-use of parked vCPUs, and the errors QEMU gives.
"""
import os
import random
import subprocess
import time

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, GUESTS, plugvm, ready_with_qmp

TIMEOUT = 3 * BOOT_TIMEOUT


def start(tmp_path, smp, append="", extra=()):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-v", "--smp", smp, "--qmp", path, "--append", append, *extra)
    vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
    wait_socket(path)
    return vm, Qmp(path)


def add(q, vm, core, seen):
    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}", "socket-id": 0,
                         "core-id": core, "thread-id": 0})
    ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ev["data"]["info"] == {"device": f"cpu{core}", "source": 1, "status": 0,
                                  "slot": str(core), "slot-type": "CPU"}, ev
    seen[core] = seen.get(core, 0) + 1
    # The guest's console line precedes its _OST, but reaches us through another pipe.
    vm.wait_count(rf"^acpi-hotplug: slot {core}: cpu {core} online \(0\)$", seen[core], TIMEOUT)


def remove(q, vm, core):
    q.cmd("device_del", {"id": f"cpu{core}"})
    ev = q.wait_event("DEVICE_DELETED", TIMEOUT)
    assert ev["data"] == {"device": f"cpu{core}", "path": f"/machine/peripheral/cpu{core}"}
    ost = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ost["data"]["info"]["source"] == 3 and ost["data"]["info"]["status"] == 0, ost


def vmm_view(q):
    return sorted(c["props"]["core-id"] for c in q.cmd("query-cpus-fast"))


@pytest.mark.parametrize("start_path", ["direct", "init-sipi", "acpi-block"])
def test_add_up_to_max_and_back_in_several_orders(tmp_path, start_path):
    # Boot 1 of 8, grow to 8 and shrink back to 1 three times, each time in another order,
    # checking the VMM's view after every step and the guest's at every add. Parked vCPUs
    # are re-used from the second round on. Both start paths: plugvm's paravirt direct
    # start, and INIT-SIPI-SIPI through the real-mode trampoline; both ways of learning
    # the events: plugvm's paravirt hotplug port, and the ACPI register block
    # (`acpi-block`, as on QEMU).
    append = {"direct": "", "init-sipi": "smp.direct_start=0",
              "acpi-block": "acpi_hotplug.pv=0"}[start_path]
    vm, q = start(tmp_path, "1,maxcpus=8", append)
    with vm, q:
        pv = vm.lines(r"^acpi-hotplug: ready .*; CPU hotplug through plugvm's paravirt port\)$")
        assert bool(pv) == (start_path != "acpi-block"), vm.transcript()
        pid = vm.proc.pid
        tasks = len(os.listdir(f"/proc/{pid}/task"))
        seen = {}
        rounds = [([1, 2, 3, 4, 5, 6, 7], [4, 7, 1, 6, 2, 5, 3]),
                  ([7, 6, 5, 4, 3, 2, 1], [1, 3, 5, 7, 2, 4, 6]),
                  ([3, 1, 6, 4, 7, 2, 5], [7, 6, 5, 4, 3, 2, 1])]
        for adds, removes in rounds:
            now = {0}
            for core in adds:
                add(q, vm, core, seen)
                now.add(core)
                assert vmm_view(q) == sorted(now)
            assert len(os.listdir(f"/proc/{pid}/task")) == tasks + 7
            assert all("qom-path" in s for s in q.cmd("query-hotpluggable-cpus"))
            for core in removes:
                remove(q, vm, core)
                now.discard(core)
                assert vmm_view(q) == sorted(now)
            assert len(os.listdir(f"/proc/{pid}/task")) == tasks
        assert q.cmd("query-status")["running"]
        q.cmd("quit")
        assert vm.wait_exit() == 0
        direct = vm.lines(r"^plugvm: vCPU \d: direct start at ", "stderr")
        if start_path != "init-sipi":
            assert len(direct) == 21, vm.transcript()  # every add
        else:
            assert not direct, vm.transcript()


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


@pytest.mark.parametrize("build,ops", [("mainline", 500), ("rt", 100)])
@pytest.mark.slow
def test_churn_while_threads_and_timers_run(tmp_path, build, ops):
    # Random adds and removes while the guest's hotplug_churn self-test runs threads and
    # timers; it then checks nothing was lost. The VMM ends with the threads it started
    # with, and its fds grow only by the vCPU fds it parks (KVM cannot close one vCPU).
    path = str(tmp_path / "qmp.sock")
    # stdin: a hang report includes the guest's thread dump (vm.post_mortem).
    vm = plugvm("--kernel", GUESTS[build], "--smp", "2,maxcpus=6", "--qmp", path, "--append",
                f"selftest=hotplug_churn hotplug_churn.events={ops}", stdin=subprocess.PIPE)
    with vm:
        vm.wait_for(r"^selftest hotplug_churn: waiting for the host to add and remove CPUs: ",
                    BOOT_TIMEOUT)
        wait_socket(path)
        pid = vm.proc.pid
        rnd = random.Random(2026)
        spare = lambda have: [c for c in range(6) if c not in have][:1]  # noqa: E731
        with Qmp(path) as q:
            wait_vcpu_fds(vm, [0, 1, *spare({0, 1})])
            before = counts(pid)
            present = {0, 1}
            seen = {}
            created = set()
            for i in range(ops):
                absent = sorted(set(range(6)) - present)
                removable = sorted(present - {0})
                if absent and (not removable or rnd.random() < 0.5):
                    core = rnd.choice(absent)
                    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}",
                                         "socket-id": 0, "core-id": core, "thread-id": 0})
                    ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
                    assert ev["data"]["info"]["status"] == 0, (i, ev, vm.transcript())
                    present.add(core)
                    created.add(core)
                else:
                    core = rnd.choice(removable)
                    name = f"cpu{core}" if core != 1 or 1 in seen else \
                        "/machine/unattached/device[1]"
                    q.cmd("device_del", {"id": name})
                    q.wait_event("DEVICE_DELETED", TIMEOUT)
                    ost = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
                    assert ost["data"]["info"]["status"] == 0, (i, ost)
                    present.discard(core)
                    seen[core] = True
                assert set(c["props"]["core-id"] for c in q.cmd("query-cpus-fast")) == present
            # Back to the boot CPUs: the VMM holds what it held then.
            for core in sorted(present - {0, 1}):
                q.cmd("device_del", {"id": f"cpu{core}"})
                q.wait_event("DEVICE_DELETED", TIMEOUT)
            if 1 not in present:
                q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "cpu1",
                                     "socket-id": 0, "core-id": 1, "thread-id": 0})
                q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
            # Each vCPU created keeps two fds while parked: its KVM fd and its statistics
            # fd (query-stats); nothing else grows. The one spare (--spare-vcpus' default)
            # is the lowest slot without a vCPU, at the start slot 2, at the end the lowest
            # slot never added, if any.
            end = sorted({0, 1, *created, *spare({0, 1, *created})})
            wait_vcpu_fds(vm, end)
            after = counts(pid)
            assert after == (before[0] + 2 * (len(end) - 3), before[1]), (before, after, end)
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
        assert vm.lines(r"^selftest hotplug_churn: pass$"), vm.transcript()
        assert not vm.lines(r"^BUG"), vm.transcript()
        assert vm.lines(rf"^selftest hotplug_churn: events=\d+ workers=6 "), vm.transcript()


def counts(pid):
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def vcpu_fds(pid):
    """The vCPUs the VMM has created (their KVM fds), present or not."""
    ids = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if link.startswith("anon_inode:kvm-vcpu:"):
            ids.append(int(link.rsplit(":", 1)[1]))
    return sorted(ids)


def wait_vcpu_fds(vm, want):
    """The VMM creates a spare vCPU once hotplug has been quiet for 10 ms: wait for the
    vCPUs `want` to exist, bounded."""
    deadline = time.monotonic() + TIMEOUT
    while vcpu_fds(vm.proc.pid) != want:
        assert time.monotonic() < deadline, (vcpu_fds(vm.proc.pid), want, vm.transcript())
        time.sleep(0.01)


def vmm_added(vm, core, n):
    """The VMM's log line of its n-th add of `core` (its stderr, read as it comes)."""
    said = vm.wait_count(rf"^plugvm: vCPU {core} added as .*", n, TIMEOUT, "stderr")
    assert len(said) == n, vm.transcript()
    return said[-1].group(0)


@pytest.mark.parametrize("spares", [0, 2])
def test_spare_vcpus_created_ahead(tmp_path, spares):
    # --spare-vcpus N keeps N vCPUs created (not present) for the lowest slots that never
    # had one; an add there uses one and the next is created once hotplug is quiet. With 0,
    # each add creates its vCPU (the fallback). Either way the guest brings every CPU online.
    vm, q = start(tmp_path, "1,maxcpus=4", extra=("--spare-vcpus", str(spares)))
    pid = vm.proc.pid
    ahead = " (created ahead)" if spares else ""
    with vm, q:
        seen = {}
        wait_vcpu_fds(vm, list(range(1 + spares)))
        assert vmm_view(q) == [0]
        add(q, vm, 1, seen)
        assert vmm_added(vm, 1, 1) == f"plugvm: vCPU 1 added as cpu1{ahead}"
        wait_vcpu_fds(vm, list(range(2 + spares)))
        add(q, vm, 3, seen)
        assert vmm_added(vm, 3, 1) == f"plugvm: vCPU 3 added as cpu3{ahead}"
        wait_vcpu_fds(vm, [0, 1, 2, 3] if spares else [0, 1, 3])
        remove(q, vm, 1)
        add(q, vm, 1, seen)  # its parked vCPU, not a spare
        assert vmm_added(vm, 1, 2) == "plugvm: vCPU 1 added as cpu1"
        add(q, vm, 2, seen)
        assert vmm_added(vm, 2, 1) == f"plugvm: vCPU 2 added as cpu2{ahead}"
        assert vmm_view(q) == [0, 1, 2, 3]
        assert vcpu_fds(pid) == [0, 1, 2, 3]
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


@pytest.mark.parametrize("policy", ["refuse", "ignore"])
@pytest.mark.slow
def test_guest_that_does_not_complete_a_removal(tmp_path, policy):
    # refuse: the guest answers with a failing _OST, reported at once. ignore: it never
    # answers; after the documented delay (10 s) the VMM reports it. Either way the CPU
    # stays, the VM runs on, and a new device_del may be sent.
    with ready_with_qmp(tmp_path, "--smp", "2,maxcpus=3", "--append",
                        f"acpi_hotplug.remove={policy}", ready=r"^acpi-hotplug: ready") as (vm, q):
        name = "/machine/unattached/device[1]"
        # Stopped, the guest cannot refuse before the second request comes (a guest that
        # refused fast made the second a new request, answered {}): it is still pending.
        q.cmd("stop")
        q.cmd("device_del", {"id": name})
        r = q.execute("device_del", {"id": name})
        assert "already in the process of unplug" in r["error"]["desc"], r
        q.cmd("cont")
        ev = q.wait_event("DEVICE_UNPLUG_GUEST_ERROR", 10 + TIMEOUT)
        assert ev["data"] == {"path": name}
        assert [c["cpu-index"] for c in q.cmd("query-cpus-fast")] == [0, 1]
        assert q.cmd("query-status")["running"]
        q.cmd("device_del", {"id": name})  # accepted again
        q.wait_event("DEVICE_UNPLUG_GUEST_ERROR", 10 + TIMEOUT)
        q.cmd("quit")
        assert vm.wait_exit() == 0


@pytest.mark.parametrize("pv", [1, 0])
def test_plugvm_cpu_events_carry_both_durations(tmp_path, pv):
    # Either way the guest learns of the event (paravirt port or ACPI block), the report
    # carries the guest's duration inside the VMM's.
    vm, q = start(tmp_path, "1,maxcpus=2", f"acpi_hotplug.pv={pv}")
    with vm, q:
        add(q, vm, 1, {})
        ev = q.wait_event("PLUGVM_CPU_ONLINE", TIMEOUT)
        d = ev["data"]
        assert d["slot"] == 1 and d["result"] == 0, d
        # The guest's bring-up is part of the host-side time from device_add.
        assert 0 < d["guest-ns"] <= 1.1 * d["host-ns"] < TIMEOUT * 1e9, d
        remove(q, vm, 1)
        d = q.wait_event("PLUGVM_CPU_OFFLINE", TIMEOUT)["data"]
        assert d["slot"] == 1 and d["result"] == 0 and 0 < d["guest-ns"] <= 1.1 * d["host-ns"], d
