# SPDX-License-Identifier: MIT
"""Reliability: the guest's hang detectors and torture tests, on the real VMM.

A hang must become a diagnosis: the lockup and hung-task detectors (kernel/watchdog.c) each
fire on a hang provoked on purpose, and print the thread dump after the report.
"""
import random
import subprocess
import sys
import time

import pytest

from qmp import Qmp, wait_socket
from vm import (BOOT_TIMEOUT, GUESTS, plugvm, ready_with_qmp, run_plugvm, run_watchdog_selftest,
                selftests)


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.slow
def test_watchdog_reports_each_kind_of_hang(build):
    vm = run_watchdog_selftest(build)
    assert selftests(vm) == {"watchdog": "pass"}, vm.transcript()
    # A CPU removed and re-added faster than its heartbeat period is not a lockup.
    assert vm.lines(r"^selftest watchdog: quick_cycles=[1-9]\d*$"), vm.transcript()
    for what in (r"hung task: thread wd-lost-wakeup \(cpu \d\) is still blocked \d+ ms after its "
                 r"sleep deadline",
                 r"stuck: selftest watchdog's operation has not finished",
                 r"soft lockup: cpu 1 has not scheduled for \d+ ms while a higher-priority "
                 r"thread waits; running wd-soft-hog",
                 r"hard lockup: cpu 1 has taken no watchdog interrupt for \d+ ms",
                 r"clock event: cpu 1 programmed its timer for \d+ ms ago and has taken no "
                 r"timer interrupt since"):
        assert vm.lines("^expected BUG: " + what), vm.transcript()
    # The diagnosis follows the first report: every thread, every CPU's hrtimer queue.
    assert vm.lines(r"^thread wd-lost-wakeup: blocked cpu \d pinned -1 "), vm.transcript()
    assert vm.lines(r"^hrtimer cpu 0: \d+ queued"), vm.transcript()


TORTURE = ["timer_torture", "wake_torture"]


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.parametrize("ncpus", [2, 4])
@pytest.mark.slow
def test_torture_with_cpus_churning_in_the_guest(build, ncpus):
    # The tests churn CPUs themselves (cpu_down/cpu_up of random CPUs) for 4 s.
    rc, vm = run_plugvm("--kernel", GUESTS[build], "--smp", f"{ncpus},maxcpus=8", "--append",
                        "selftest=" + ",".join(TORTURE) + " torture.seconds=4",
                        timeout=4 * BOOT_TIMEOUT)
    assert rc == 0, vm.transcript()
    assert selftests(vm) == {t: "pass" for t in TORTURE}, vm.transcript()
    m = vm.lines(r"^selftest timer_torture: threads=(\d+) armings=(\d+) fired=(\d+) "
                 r"cancelled=(\d+) .* cpu_cycles=(\d+) ")
    assert m, vm.transcript()
    threads, armings, fired, cancelled, cycles = (int(x) for x in m[0].groups())
    assert armings == fired + cancelled and fired > 0 and cancelled > 0, vm.transcript()
    assert cycles > 0, vm.transcript()
    m = vm.lines(r"^selftest wake_torture: pairs=\d+ rounds=(\d+) raw=(\d+) waitq=(\d+) "
                 r"completion=(\d+) timed=(\d+) timed_completion=(\d+) cpu_cycles=(\d+) ")
    assert m and all(int(x) > 0 for x in m[0].groups()), vm.transcript()


def test_pm_timer_calibration_survives_vcpu_stalls():
    # Each PM-timer read is a VM exit; a vCPU stalled inside one must not pair the read with
    # a late TSC read: each read is bracketed by TSC reads, so the calibration holds with
    # every other KVM_RUN entry stalled up to 3 ms.
    for seed in (1, 2, 3, 4):
        rc, vm = run_plugvm(f"--chaos=seed={seed},stall=50%:3ms,irq=off,start=off", "--smp", "2",
                            "--append", "selftest=tsc")
        assert rc == 0 and selftests(vm) == {"tsc": "pass"}, vm.transcript()


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.slow
def test_torture_under_chaos(build):
    # The same, with the host stalling vCPUs and delaying interrupts (the seed is printed on
    # stderr: the transcript of a failure says how to replay it).
    rc, vm = run_plugvm("--chaos", "--kernel", GUESTS[build], "--smp", "4,maxcpus=8",
                        "--append", "selftest=" + ",".join(TORTURE) + " torture.seconds=4",
                        timeout=4 * BOOT_TIMEOUT)
    assert rc == 0, vm.transcript()
    assert selftests(vm) == {t: "pass" for t in TORTURE}, vm.transcript()
    assert vm.lines(r"^plugvm: chaos: seed=\d+: [1-9]\d* stalls", "stderr"), vm.transcript()


def cpu_args(core):
    return {"driver": "host-x86_64-cpu", "id": f"cpu{core}", "socket-id": 0, "core-id": core,
            "thread-id": 0}


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.slow
def test_torture_while_the_host_adds_and_removes_cpus_under_chaos(tmp_path, build):
    # The torture tests' CPUs churn from outside: 60 device_add/device_del through QMP under
    # --chaos, each answered (ACPI_DEVICE_OST / DEVICE_DELETED), both views agreeing.
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--chaos", "--kernel", GUESTS[build], "--smp", "2,maxcpus=6", "--qmp", path,
                "--append", "selftest=" + ",".join(TORTURE) +
                " torture.events=30 torture.seconds=3600 selftest.stay")
    rnd = random.Random(1)
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            present, named = {0, 1}, set()

            def toggle(core):
                if core in present:
                    q.cmd("device_del", {"id": f"cpu{core}" if core in named
                                         else f"/machine/unattached/device[{core}]"})
                    q.wait_event("DEVICE_DELETED", 3 * BOOT_TIMEOUT)
                    ev = q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
                    present.discard(core)
                else:
                    q.cmd("device_add", cpu_args(core))
                    ev = q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
                    present.add(core)
                    named.add(core)
                assert ev["data"]["info"]["status"] == 0, (ev, vm.transcript())
                assert {c["props"]["core-id"] for c in q.cmd("query-cpus-fast")} == present

            for i in range(60):
                absent = sorted(set(range(6)) - present)
                removable = sorted(present - {0})
                toggle(rnd.choice(absent) if absent and (not removable or rnd.random() < 0.5)
                       else rnd.choice(removable))
            # Each test counts its own 30 events; a few fall between the two: go on until
            # both have finished (the guest stays up: selftest.stay).
            deadline = time.monotonic() + 4 * BOOT_TIMEOUT
            while not vm.lines(r"^selftest: \d+ passed") and time.monotonic() < deadline:
                toggle(5)
            q.cmd("quit")
        assert vm.wait_exit(BOOT_TIMEOUT) == 0, vm.transcript()
    assert selftests(vm) == {t: "pass" for t in TORTURE}, vm.transcript()
    assert vm.lines(r"^selftest: 2 passed, 0 failed$"), vm.transcript()
    m = vm.lines(r"^selftest timer_torture: .* host_events=(\d+) ")
    assert m and int(m[0].group(1)) >= 30, vm.transcript()


def test_seven_cpus_come_and_go_on_a_loaded_host(tmp_path):
    # Both host cores busy with other work while a QMP client adds CPUs 1-7 and removes them
    # again, in two orders, with --chaos on top: every request answered, nothing lost.
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        path = str(tmp_path / "qmp.sock")
        vm = plugvm("--chaos", "--smp", "1,maxcpus=8", "--qmp", path)
        with vm:
            vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
            wait_socket(path)
            with Qmp(path) as q:
                for adds, dels in (([1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1]),
                                   ([4, 2, 7, 1, 6, 3, 5], [1, 5, 2, 7, 3, 6, 4])):
                    for core in adds:
                        q.cmd("device_add", cpu_args(core))
                        ev = q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
                        assert ev["data"]["info"]["status"] == 0, (ev, vm.transcript())
                    assert len(q.cmd("query-cpus-fast")) == 8
                    for core in dels:
                        q.cmd("device_del", {"id": f"cpu{core}"})
                        q.wait_event("DEVICE_DELETED", 3 * BOOT_TIMEOUT)
                        ev = q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
                        assert ev["data"]["info"]["status"] == 0, (ev, vm.transcript())
                    assert len(q.cmd("query-cpus-fast")) == 1
                q.cmd("quit")
            assert vm.wait_exit() == 0, vm.transcript()
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def test_back_to_back_hotplug_is_not_reported_stuck(tmp_path):
    # A client that sends each device_add/device_del as soon as the last one is answered
    # keeps the guest's hotplug driver in one pass over the events (it takes the ones that
    # arrive meanwhile). The watch on "an SCI the thread has not taken" must end when the
    # thread takes the SCI's event, not when the pass ends: a stream longer than the bound
    # (2 s here) is not "stuck".
    with ready_with_qmp(tmp_path, "--smp", "1,maxcpus=4", "--append", "watchdog.bound_s=2",
                        ready=r"^acpi-hotplug: ready") as (vm, q):
        ops, end = 0, time.monotonic() + 8
        while time.monotonic() < end or ops < 60:
            for core in (1, 2, 3):
                q.cmd("device_add", cpu_args(core))
                ev = q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
                assert ev["data"]["info"]["status"] == 0, (ev, vm.transcript())
            for core in (3, 2, 1):
                q.cmd("device_del", {"id": f"cpu{core}"})
                q.wait_event("DEVICE_DELETED", 3 * BOOT_TIMEOUT)
                q.wait_event("ACPI_DEVICE_OST", 3 * BOOT_TIMEOUT)
            ops += 6
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()
        assert not vm.lines(r"BUG:"), vm.transcript()
