# SPDX-License-Identifier: MIT
"""vCPUs on demand on the real VMM (docs/autoscale.md): plugvm adds a vCPU while the guest's
threads are short of CPU and removes it once the guest idles, within its range, one operation
at a time, every decision a PLUGVM_AUTOSCALE event; operator commands win; bad settings are
refused with a clear error and the VM keeps running. Watched over QMP, as a user would.
"""
import os
import re
import subprocess
import time

import pytest

from qmp import Qmp, QmpError, wait_socket
from vm import BOOT_TIMEOUT, PLUGVM, ROOT, plugvm

TIMEOUT = 3 * BOOT_TIMEOUT


def start(tmp_path, smp, spec, append="", extra=()):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-v", "--smp", smp, "--qmp", path, "--autoscale", spec, "--append", append,
                *extra)
    vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
    wait_socket(path)
    return vm, Qmp(path)


def autoscale_event(q, action, timeout=TIMEOUT):
    """The next PLUGVM_AUTOSCALE event with `action`; the others before it, in order."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        ev = q.wait_event("PLUGVM_AUTOSCALE", max(0.1, deadline - time.monotonic()))
        seen.append(ev["data"])
        if ev["data"]["action"] == action:
            return ev["data"], seen


def present(q):
    return len(q.cmd("query-cpus-fast"))


def test_load_adds_a_vcpu_and_idleness_takes_it_back(tmp_path):
    # Two CPU-bound threads on one vCPU: an add, for the pressure the guest reports; once
    # they stop, the removal of that vCPU.
    vm, q = start(tmp_path, "1,maxcpus=2", "min=1,max=2,idle-time=500ms")
    with vm, q:
        status = q.cmd("query-autoscale")
        assert status["enabled"] and status["min"] == 1 and status["max"] == 2, status
        wl = q.cmd("workload-start", {"kind": "hog", "threads": 2, "period-us": 10})
        add, before = autoscale_event(q, "add")
        assert [e["action"] for e in before] == ["add"], before
        # The guest's own figures: its second thread waited all along.
        assert add["reason"] == "pressure" and add["figures"]["source"] == "guest", add
        assert add["device"] == "vcpu1" and add["slot"] == "1", add
        assert add["figures"]["online"] == 1 and add["figures"]["pressure"] >= 0.2, add
        done, _ = autoscale_event(q, "added")
        assert done["device"] == "vcpu1", done
        vm.wait_for(r"^cpu 1: online", TIMEOUT)
        assert present(q) == 2
        # At max: however long the load lasts, nothing more is asked for.
        time.sleep(1.0)
        assert present(q) == 2
        assert q.cmd("query-autoscale")["counters"]["adds"] == 1
        q.cmd("workload-stop", wl)
        remove, between = autoscale_event(q, "remove")
        assert [e["action"] for e in between] == ["remove"], between
        assert remove["reason"] == "idle" and remove["slot"] == "1", remove
        removed, _ = autoscale_event(q, "removed")
        assert removed["device"] == "vcpu1", removed
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        assert present(q) == 1
        counters = q.cmd("query-autoscale")["counters"]
        assert counters["adds"] == 1 and counters["removes"] == 1, counters
        assert counters["failed"] == 0 and counters["refused"] == 0, counters
        vm.assert_no_bugs()


def test_operator_commands_win(tmp_path):
    # An operator's add becomes the minimum, a removal the maximum: the policy never undoes
    # them (an idle guest keeps the added vCPU; a loaded one gets none back).
    vm, q = start(tmp_path, "1,maxcpus=3", "min=1,max=3,idle-time=300ms,cooldown=100ms")
    with vm, q:
        q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "op1", "socket-id": 0,
                             "core-id": 1, "thread-id": 0})
        rng, _ = autoscale_event(q, "range")
        assert (rng["min"], rng["max"]) == (2, 3), rng
        vm.wait_for(r"^cpu 1: online", TIMEOUT)
        time.sleep(2.0)  # idle, for several idle-times
        assert present(q) == 2
        assert q.cmd("query-autoscale")["counters"]["removes"] == 0
        q.cmd("device_del", {"id": "op1"})
        rng, _ = autoscale_event(q, "range")
        assert (rng["min"], rng["max"]) == (1, 1), rng
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        wl = q.cmd("workload-start", {"kind": "hog", "threads": 2, "period-us": 10})
        time.sleep(2.0)  # loaded, for many pressure-times
        assert present(q) == 1
        q.cmd("workload-stop", wl)
        status = q.cmd("query-autoscale")
        assert status["counters"]["adds"] == 0 and status["counters"]["manual"] == 2, status
        # autoscale-set hands the decision back.
        q.cmd("autoscale-set", {"max": 3})
        assert q.cmd("query-autoscale")["max"] == 3
        vm.assert_no_bugs()


def test_off_on_and_query(tmp_path):
    path = str(tmp_path / "qmp.sock")
    with plugvm("--smp", "1,maxcpus=2", "--qmp", path) as vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            status = q.cmd("query-autoscale")
            assert status["enabled"] is False and "min" not in status, status
            q.cmd("autoscale-set", {"max": 2, "pressure": 50})
            on, _ = autoscale_event(q, "on")
            assert (on["min"], on["max"]) == (1, 2), on
            status = q.cmd("query-autoscale")
            assert status["enabled"] and status["pressure"] == 50, status
            assert status["idle-ms"] == 1000 and status["cooldown-ms"] == 500, status
            q.cmd("autoscale-set", {"idle": 70})  # the rest stays
            status = q.cmd("query-autoscale")
            assert status["pressure"] == 50 and status["idle"] == 70, status
            q.cmd("autoscale-off")
            autoscale_event(q, "off")
            assert q.cmd("query-autoscale")["enabled"] is False


@pytest.mark.parametrize("args,msg", [
    ({"min": 2, "max": 1}, "want 1 <= min <= max"),
    ({"min": 0}, "Parameter 'min' expects a value in 1..2"),
    ({"max": 3}, "Parameter 'max' expects a value in 1..2"),
    ({"period-ms": 5}, "Parameter 'period-ms'"),
    ({"pressure": 0}, "Parameter 'pressure'"),
    ({"idle": 100}, "Parameter 'idle'"),
    ({"cooldown-ms": -1}, "Parameter 'cooldown-ms'"),
    ({"min": "1"}, "min"),
    ({"speed": 1}, "speed"),
])
def test_bad_settings_are_refused_and_the_vm_runs_on(tmp_path, args, msg):
    path = str(tmp_path / "qmp.sock")
    with plugvm("--smp", "1,maxcpus=2", "--qmp", path, "--autoscale", "on") as vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            before = q.cmd("query-autoscale")
            with pytest.raises(QmpError) as e:
                q.cmd("autoscale-set", args)
            assert msg in e.value.desc, e.value.desc
            after = q.cmd("query-autoscale")
            assert {k: after[k] for k in ("min", "max", "pressure", "idle")} == \
                {k: before[k] for k in ("min", "max", "pressure", "idle")}
            assert q.cmd("query-status")["status"] == "running"


@pytest.mark.parametrize("spec,msg", [
    ("bogus", "--autoscale: 'bogus' is not KEY=VALUE"),
    ("", "--autoscale: empty spec"),
    ("min=3,max=2", "min=3 exceeds max=2"),
    ("max=5", "--autoscale: min=0, max=5: at most maxcpus (2, from --smp)"),
    ("pressure=200%", "bad pressure value"),
    ("idle-time=forever", "bad idle-time value"),
])
def test_bad_specs_are_refused_at_start(spec, msg):
    r = subprocess.run([PLUGVM, "--smp", "1,maxcpus=2", "--autoscale", spec],
                       capture_output=True, text=True, timeout=BOOT_TIMEOUT)
    assert r.returncode == 2, r
    assert msg in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_domain_metadata_turns_it_on(tmp_path):
    with open(os.path.join(ROOT, "configs/libvirt/plugvm-domain.xml")) as f:
        xml = f.read()
    own = "<plugvm:qmp path='unix:/tmp/plugvm-demo.qmp'/>"
    assert own in xml
    doc = tmp_path / "d.xml"
    doc.write_text(xml.replace(own, "<plugvm:autoscale spec='min=1,max=4,cooldown=2s'/>"))
    path = str(tmp_path / "qmp.sock")
    kernel = os.path.join(ROOT, "build", "guest.elf")
    with plugvm("--domain", str(doc), "--kernel", kernel, "--qmp", path) as vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            status = q.cmd("query-autoscale")
            assert status["enabled"] and status["cooldown-ms"] == 2000, status
            assert (status["min"], status["max"]) == (1, 4), status
    doc.write_text(xml.replace(own, "<plugvm:autoscale spec='min=1;max=2'/>"))
    r = subprocess.run([PLUGVM, "--domain", str(doc), "--kernel", kernel],
                       capture_output=True, text=True, timeout=BOOT_TIMEOUT)
    assert r.returncode == 2 and "--autoscale: bad min value" in r.stderr, r
    doc.write_text(xml.replace(own, "<plugvm:autoscale/>"))
    r = subprocess.run([PLUGVM, "--domain", str(doc), "--kernel", kernel],
                       capture_output=True, text=True, timeout=BOOT_TIMEOUT)
    assert r.returncode == 2 and "<plugvm:autoscale>: needs spec=" in r.stderr, r
