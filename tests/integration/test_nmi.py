# SPDX-License-Identifier: MIT
"""QMP inject-nmi and the guest's NMI report (kernel/nmi.c): every running vCPU takes an NMI,
each guest CPU prints its interrupt, clock-event, hrtimer and run-queue state through the
polled UART path, one CPU's lines together; the VM runs on and powers off cleanly. Also
plugctl's `nmi`, NMIs while paused and to hot-added and removed CPUs, bad input, and the
watchdog's reports, which send the NMIs themselves.
"""
import os
import re
import subprocess
import threading
import time

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, ROOT, plugvm, run_watchdog_selftest

PLUGCTL = os.environ.get("PLUGCTL_BIN", os.path.join(ROOT, "build", "plugctl"))
REPORT = [r"rip 0x[0-9a-f]+, interrupts (on|off), at \d+ us",
          r"lapic: isr [-0-9a-f,]+ irr [-0-9a-f,]+ tmr [-0-9a-f,]+ lvtt 0x[0-9a-f]+( \(masked\))?, "
          r"tsc-deadline (in -?\d+ us|0 \(off or fired\))",
          r"hrtimer: \d+ queued, first in -?\d+ us, programmed (in -?\d+|off 0) us"
          r"(, in interrupt)?, \d+ interrupts, \d+ reprograms",
          r"rq: running \S+, nr_running \d+, queued \d+, wake list (empty|NOT EMPTY), "
          r"need_resched \d+, preempt (0x[0-9a-f]+|0), irqs \d+"]


CALLED_FROM = r"called from( 0x[0-9a-f]+)+"


def reports(vm, start=0):
    """The NMI report lines from stdout line `start` on, checked: every CPU's four lines
    (and its optional `called from` line) come together and in order. Returns {cpu: number of
    reports}."""
    lines = [l for l in vm.stdout[start:] if l.startswith("nmi: ")]
    seen = {}
    i = 0
    while i < len(lines):
        m = re.match(r"^nmi: cpu (\d+): (.*)$", lines[i])
        assert m, lines[i]
        cpu = int(m.group(1))
        assert i + 4 <= len(lines), lines[i:]
        for k, pattern in enumerate(REPORT):
            m2 = re.match(rf"^nmi: cpu {cpu}: (.*)$", lines[i + k])
            assert m2 and re.match(pattern, m2.group(1)), (k, lines[i:i + 4])
        seen[cpu] = seen.get(cpu, 0) + 1
        i += 4
        # Then, when its frame pointers lead somewhere, where the interrupted code was called.
        if i < len(lines) and re.match(rf"^nmi: cpu {cpu}: {CALLED_FROM}$", lines[i]):
            i += 1
    return seen


def wait_reports(vm, start, cpus, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [l for l in vm.stdout[start:] if l.startswith("nmi: ")]
        if len(lines) >= 4 * len(cpus) and all(
                sum(1 for l in lines if l.startswith(f"nmi: cpu {c}: rq: ")) for c in cpus):
            return reports(vm, start)
        time.sleep(0.1)
    raise AssertionError("no NMI report from every CPU:\n" + vm.transcript())


def started(tmp_path, smp):
    """A guest with nothing to do, its hotplug driver listening; (vm, QMP socket path)."""
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", smp, "--qmp", path, "--append", "")
    vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
    wait_socket(path)
    return vm, path


@pytest.mark.slow
def test_nmi_reports_stay_whole_while_the_guest_prints(tmp_path):
    """NMIs land while other CPUs print (cpuhp.trace: a line per state while CPU 1 cycles):
    no report line is split by a printk() line, nor splits one (CI once saw `at 915` run into
    `plugvm-guest: boot done` mid-line)."""
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "2", "--qmp", path, "--append", "cpuhp.trace")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        start = len(vm.stdout)
        with Qmp(path, timeout=120) as hp, Qmp(path) as q:
            done, errors = threading.Event(), []
            # The agent's state table, so that the names below are known by now.
            assert {"offline", "online"} <= {st["name"] for st in hp.cmd("query-cpuhp-states")}

            def cycle():
                try:
                    for _ in range(3):
                        for state in ("offline", "online"):
                            r = hp.cmd("cpuhp-set-target", {"cpu": 1, "state": state})
                            assert r["success"], r
                except Exception as e:  # noqa: BLE001 - reported by the test below
                    errors.append(e)
                finally:
                    done.set()
            t = threading.Thread(target=cycle)
            t.start()
            sent = 0
            while not done.is_set() or sent < 5:
                assert q.cmd("inject-nmi") == {}
                sent += 1
                time.sleep(0.05)
            t.join()
            assert not errors, errors
            vm.wait_for(r"^nmi: cpu 0: rq: ", 60)
        # Every report line whole (a CPU caught offline reports two lines), and every printk
        # line too.
        offline = r"rip 0x[0-9a-f]+, interrupts (on|off), offline \(dying \d\)"
        nmi = [l for l in vm.stdout[start:] if "nmi: cpu " in l]
        assert len(nmi) >= 4, vm.transcript()
        for line in nmi:
            m = re.match(r"^nmi: cpu \d+: (.*)$", line)
            assert m and any(re.fullmatch(p, m.group(1))
                             for p in REPORT + [offline, CALLED_FROM]), line
        q2 = Qmp(path)
        q2.cmd("quit")
        q2.close()


def test_inject_nmi_reports_every_cpu_and_the_vm_runs_on(tmp_path):
    vm, path = started(tmp_path, "2,maxcpus=4")
    with vm:
        with Qmp(path) as q:
            start = len(vm.stdout)
            assert q.cmd("inject-nmi") == {}
            assert wait_reports(vm, start, [0, 1]) == {0: 1, 1: 1}

            # Bad input: an error, and nothing sent.
            r = q.execute("inject-nmi", {"cpu-index": 1})
            assert r["error"] == {"class": "GenericError",
                                  "desc": "Parameter 'cpu-index' is unexpected"}, r

            # A hot-added CPU reports too; a removed one is not asked.
            q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "c2", "socket-id": 0,
                                 "core-id": 2, "thread-id": 0})
            q.wait_event("ACPI_DEVICE_OST", BOOT_TIMEOUT)
            start = len(vm.stdout)
            q.cmd("inject-nmi")
            assert wait_reports(vm, start, [0, 1, 2]) == {0: 1, 1: 1, 2: 1}
            q.cmd("device_del", {"id": "c2"})
            q.wait_event("DEVICE_DELETED", BOOT_TIMEOUT)
            start = len(vm.stdout)
            q.cmd("inject-nmi")
            assert wait_reports(vm, start, [0, 1]) == {0: 1, 1: 1}

            # Paused: the NMI waits for the vCPUs to run again.
            assert q.cmd("stop") == {}
            start = len(vm.stdout)
            q.cmd("inject-nmi")
            time.sleep(0.5)
            assert not [l for l in vm.stdout[start:] if l.startswith("nmi: ")]
            assert q.cmd("cont") == {}
            assert wait_reports(vm, start, [0, 1]) == {0: 1, 1: 1}

            # The guest still works: a CPU comes and goes, the power button powers off.
            q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "c3", "socket-id": 0,
                                 "core-id": 3, "thread-id": 0})
            ev = q.wait_event("ACPI_DEVICE_OST", BOOT_TIMEOUT)
            assert ev["data"]["info"]["status"] == 0, ev
            q.cmd("system_powerdown")
        assert vm.wait_exit() == 0, vm.transcript()
        vm.assert_no_bugs()


def test_plugctl_nmi(tmp_path):
    vm, path = started(tmp_path, "1")
    with vm:
        start = len(vm.stdout)
        p = subprocess.run([PLUGCTL, "-s", path, "nmi"], capture_output=True, text=True,
                           timeout=120)
        assert (p.returncode, p.stdout) == (0, "NMI sent to every vCPU\n"), p
        assert wait_reports(vm, start, [0]) == {0: 1}
        p = subprocess.run([PLUGCTL, "-s", path, "nmi", "0"], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 2 and "nmi takes no argument" in p.stderr, p
        p = subprocess.run([PLUGCTL, "-s", path, "quit"], capture_output=True, timeout=120)
        assert vm.wait_exit() == 0, vm.transcript()


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.slow
def test_watchdog_report_brings_every_cpus_nmi_report(build):
    # selftest=watchdog provokes each report on purpose; the first one's dump begins with
    # every CPU's NMI report, before the thread dump.
    vm = run_watchdog_selftest(build)
    first = next(i for i, l in enumerate(vm.stdout) if l.startswith("nmi: "))
    seen = reports(vm, first)
    assert set(seen) == {0, 1}, vm.transcript()
    threads = next(i for i, l in enumerate(vm.stdout) if l.startswith("thread "))
    assert first < threads, vm.transcript()
