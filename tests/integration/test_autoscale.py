# SPDX-License-Identifier: MIT
"""vCPUs on demand on the real VMM (docs/autoscale.md): plugvm adds a vCPU while the guest's
threads are short of CPU and removes it once the guest idles, within its range, one operation
at a time, every decision a PLUGVM_AUTOSCALE event; operator commands win; bad settings are
refused with a clear error and the VM keeps running. Watched over QMP, as a user would.
"""
import os
import subprocess
import time

import pytest

from qmp import Qmp, QmpError, wait_socket
from vm import BOOT_TIMEOUT, PLUGVM, ROOT, kvm_module, plugvm

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


def watch_until_exit(vm, q, each=None):
    """PLUGVM_AUTOSCALE events and the most vCPUs present until the guest powers off (the
    socket closes with it); `each(q)` runs every round too."""
    events, most = [], 0
    try:
        while vm.proc.poll() is None:
            most = max(most, present(q))
            if each:
                each(q)
            try:
                events.append(q.wait_event("PLUGVM_AUTOSCALE", 0.1)["data"])
            except TimeoutError:
                pass
    except (OSError, EOFError):
        pass
    events += [e["data"] for e in q.events if e["event"] == "PLUGVM_AUTOSCALE"]
    return events, most


def burst_work():
    """bursts.work for items of ~25 ms: kvm_pvm emulates the guest's kernel code (the loop
    runs there) at ~1.5 M instructions/s, hardware and other KVMs run it ~1000x faster."""
    return 10000 if kvm_module() == "kvm_pvm" else 10000000


def ops_in_order(events):
    """The decisions and outcomes of a run: each add/remove is followed by its own outcome
    before the next decision (never two in flight). Returns the decided operations."""
    decided, open_op = [], None
    for e in events:
        if e["action"] in ("add", "remove"):
            assert open_op is None, f"{e} while {open_op} was in flight"
            open_op = e
            decided.append(e)
        elif e["action"] in ("added", "removed", "refused", "failed"):
            assert open_op is not None and e["slot"] == open_op["slot"], (e, open_op)
            open_op = None
    return decided


def wait_held(q, slot, held=True):
    """Until the policy's last sample saw guest CPU `slot` held (or not), in the guest's
    figures (a record read for the first time, the baseline, gives the host's)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        cpus = {c["slot"]: c for c in q.cmd("query-autoscale")["cpus"]}
        if slot in cpus and cpus[slot]["held"] == held and cpus[slot]["source"] == "guest":
            return cpus[slot]
        assert time.monotonic() < deadline, cpus
        time.sleep(0.05)


def test_a_held_cpu_keeps_its_vcpu(tmp_path):
    # A real-time thread pinned to guest CPU 1 holds it: the idle guest would give vCPU 1
    # back, but the policy does not pick it (the guest's HELD), says so once, and waits.
    # Once the thread ends, the removal goes through. min=2 until the hold is seen, so the
    # policy cannot remove vCPU 1 before the thread holds it.
    vm, q = start(tmp_path, "2,maxcpus=2", "min=2,max=2,idle-time=300ms,cooldown=100ms")
    with vm, q:
        wl = q.cmd("workload-start", {"kind": "hold", "cpu": 1, "threads": 1,
                                      "period-us": 1000})
        wait_held(q, 1)
        q.cmd("autoscale-set", {"min": 1})
        held, before = autoscale_event(q, "held")
        assert not ops_in_order(before), before
        assert held["figures"]["online"] == 2 and held["reason"] == "held", held
        time.sleep(1.0)  # several idle-times: still nothing
        assert present(q) == 2
        status = q.cmd("query-autoscale")
        assert status["counters"]["removes"] == 0 and status["counters"]["refused"] == 0
        q.cmd("workload-stop", wl)
        removed, after = autoscale_event(q, "removed")
        assert [e["action"] for e in after if e["action"] != "held"] == ["remove", "removed"]
        assert removed["slot"] == "1", removed
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        assert present(q) == 1
        vm.assert_no_bugs()


def test_the_guest_refuses_to_give_up_a_held_cpu(tmp_path):
    # Through cpuhp: the removal request fails before anything is torn down, the guest
    # reports it (a failing _OST: DEVICE_UNPLUG_GUEST_ERROR) and the CPU stays online.
    path = str(tmp_path / "qmp.sock")
    with plugvm("-v", "--smp", "1,maxcpus=2", "--qmp", path) as vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "c1", "socket-id": 0,
                                 "core-id": 1, "thread-id": 0})
            vm.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$", TIMEOUT)
            wl = q.cmd("workload-start", {"kind": "hold", "cpu": 1, "threads": 1})
            q.cmd("device_del", {"id": "c1"})
            ev = q.wait_event("DEVICE_UNPLUG_GUEST_ERROR", TIMEOUT)
            assert ev["data"]["device"] == "c1", ev
            vm.wait_for(r"^acpi-hotplug: slot 1: cpu 1 refused to go \(-16\)$", TIMEOUT)
            assert present(q) == 2
            q.cmd("workload-stop", wl)
            q.cmd("device_del", {"id": "c1"})
            q.wait_event("DEVICE_DELETED", TIMEOUT)
            with pytest.raises(QmpError):
                q.cmd("workload-start", {"kind": "hold", "threads": 1})  # no cpu
            with pytest.raises(QmpError):
                q.cmd("workload-start", {"kind": "hog", "cpu": 0})
            vm.assert_no_bugs()


def test_a_lying_guest_gets_nothing_beyond_bounds_and_rate(tmp_path):
    # selftest=load_liar rewrites its load records with lies as fast as it can and sends
    # registrations plugvm must refuse. plugvm notices (implausible figures), keeps its
    # vCPUs within min..max, decides at most once per cooldown, one operation at a time,
    # stays responsive, and the guest's bad registrations were all refused.
    vm, q = start(tmp_path, "1,maxcpus=2", "min=1,max=2,cooldown=300ms",
                  append="selftest=load_liar load_liar.ms=6000")
    with vm, q:
        t0 = time.monotonic()
        seen = {}

        def check(q):
            t = time.monotonic()
            q.cmd("query-status")
            assert time.monotonic() - t < 1.0, "the main loop stalled"
            seen["counters"] = q.cmd("query-autoscale")["counters"]
            assert time.monotonic() - t0 < TIMEOUT, "load_liar did not finish"

        events, most = watch_until_exit(vm, q, check)
        counters = seen["counters"]
        elapsed = time.monotonic() - t0
        vm.wait_exit(TIMEOUT)
        assert vm.proc.returncode == 0, vm.transcript()
        assert vm.lines(r"^selftest load_liar: pass"), vm.transcript()
        assert most <= 2
        assert counters["implausible"] + counters["unconfirmed"] > 0, counters
        decided = ops_in_order(events)
        # Each operation takes its cooldown at least: no more than the time allows.
        assert len(decided) <= elapsed / 0.3 + 1, (len(decided), elapsed)


def test_bursts_under_chaos(tmp_path):
    # The bursty workload with the host acting loaded (--chaos): every burst completes, the
    # vCPUs follow the load without flapping (at most two operations per burst and idle
    # phase), never two in flight, never beyond max.
    path = str(tmp_path / "qmp.sock")
    append = (f"bursts=3 bursts.work={burst_work()} bursts.idle_ms=3000 bursts.start_ms=1500 "
              "halt")
    vm = plugvm("-v", "--smp", "1,maxcpus=2", "--qmp", path, "--chaos=seed=7",
                "--autoscale", "min=1,max=2", "--append", append)
    with vm:
        wait_socket(path)
        with Qmp(path) as q:
            events, most = watch_until_exit(vm, q)
        assert most <= 2
        decided = ops_in_order(events)
        assert 1 <= len(decided) <= 2 * 3, events
        assert len(vm.lines(r"^bursts: burst=")) == 3
        vm.wait_exit(TIMEOUT)
        assert vm.proc.returncode == 0, vm.transcript()
        vm.assert_no_bugs()
