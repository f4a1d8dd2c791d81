#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Soak: many boots and many hot-add/remove operations, every one checked, nothing lost.

  boots    short boots (`--smp 4,maxcpus=8 --append halt`) alternating the default and RT
           guest, every second one with `--chaos` (a fresh seed each, printed on failure)
  full     full boots of configs/default.args (every self-test), half with `--chaos`
  ops      hot-add/remove operations through QMP with `--chaos` while the guest's
           timer_torture and wake_torture run (their CPUs churn from the host): every
           device_add must get its ACPI_DEVICE_OST, every device_del its DEVICE_DELETED, the
           guest's and the VMM's CPU views must agree, and the VMM's fds, threads and RSS
           must stay flat

Every VM has a hard bound; a hang, a failure or a guest `BUG:` line is counted and its
transcript kept under build/soak/ (a hung VM is first asked for every CPU's NMI report
through QMP inject-nmi, then for its threads and vCPU registers). A progress line shows while it runs; a summary table
comes at the end (also written to build/soak/summary.md). Exit status 0 only if nothing
failed. Usage: tests/soak/soak.py [--boots N] [--full N] [--ops N] [--jobs J] [--seed S]
"""
import argparse
import concurrent.futures
import os
import random
import shlex
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from qmp import Qmp, wait_socket  # noqa: E402
from vm import GUEST, GUEST_RT, PLUGVM, ROOT, Vm, VmFailure  # noqa: E402

OUT = os.path.join(ROOT, "build", "soak")
BOOT_BOUND = 120.0  # a short boot: seconds here, a few on a loaded host
FULL_BOUND = 900.0  # every self-test, with chaos, on a loaded 2-core host
OP_BOUND = 60.0  # one hot-add or hot-remove, answered


class Tally:
    def __init__(self, name, total):
        self.name, self.total = name, total
        self.done = self.failed = self.hangs = 0
        self.durations = []
        self.failures = []
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def record(self, ok, seconds, hang=False, what=None):
        with self.lock:
            self.done += 1
            self.durations.append(seconds)
            if not ok:
                self.failed += 1
                self.hangs += hang
                if what:
                    self.failures.append(what)

    def line(self):
        el = time.monotonic() - self.started
        return (f"{self.name}: {self.done}/{self.total} failed {self.failed} hangs "
                f"{self.hangs} ({el:.0f} s)")

    def row(self):
        d = sorted(self.durations) or [0]
        return (f"| {self.name} | {self.done} | {self.failed} | {self.hangs} | "
                f"{d[len(d) // 2]:.2f} | {d[min(len(d) - 1, int(len(d) * 0.99))]:.2f} | "
                f"{time.monotonic() - self.started:.0f} |")


def progress(tallies, stop):
    while not stop.wait(1.0):
        sys.stderr.write("\r" + " | ".join(t.line() for t in tallies) + "   ")
        sys.stderr.flush()
    sys.stderr.write("\r" + " | ".join(t.line() for t in tallies) + "   \n")


def keep(name, vm, why):
    """Save a failed run's whole console and stderr; return where."""
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, f"{name}.log")
    with open(path, "w") as f:
        f.write(f"{why}\ncommand: {' '.join(vm.argv)}\n")
        f.write("--- stdout ---\n" + "\n".join(vm.stdout) + "\n")
        f.write("--- stderr ---\n" + "\n".join(vm.stderr) + "\n")
    return path


def boot(index, seed, full):
    """One boot; returns (ok, seconds, hang, failure description)."""
    rng = random.Random(seed * 1000003 + index)
    kernel = GUEST if index % 2 == 0 else GUEST_RT
    chaos = (index // 2) % 2 == 1
    if full:
        with open(os.path.join(ROOT, "configs", "default.args")) as f:
            args = shlex.split(f.read())
    else:
        args = ["--smp", "4,maxcpus=8", "--append", "halt"]
    # A QMP socket only for a hang's post-mortem (inject-nmi: every CPU's NMI report).
    qmp = os.path.join(OUT, f"{'full' if full else 'boot'}-{index}.qmp")
    os.makedirs(OUT, exist_ok=True)
    args = ["--kernel", kernel, "--qmp", qmp, *args]
    if chaos:
        args.insert(0, f"--chaos=seed={rng.randrange(1, 1 << 31)}")
    start = time.monotonic()
    vm = Vm([PLUGVM, *args])
    name = f"{'full' if full else 'boot'}-{index}"
    try:
        rc = vm.wait_exit(FULL_BOUND if full else BOOT_BOUND)
    except VmFailure as e:
        hang = "did not exit" in str(e)
        return False, time.monotonic() - start, hang, keep(name, vm, str(e).split("\n")[0])
    finally:
        vm.kill()
    took = time.monotonic() - start
    if rc != 0:
        return False, took, False, keep(name, vm, f"exit status {rc}")
    if full and not vm.lines(r"^selftest: \d+ passed, 0 failed$"):
        return False, took, False, keep(name, vm, "no clean self-test summary")
    if not full and not vm.lines(r"^plugvm-guest: 4/4 CPUs online$"):
        return False, took, False, keep(name, vm, "boot summary missing")
    return True, took, False, None


def proc_counts(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task")), rss


def hotplug(ops, seed, tally):
    """`ops` operations on one VM under --chaos while the torture tests run in it."""
    rng = random.Random(seed)
    path = os.path.join(OUT, f"soak-{os.getpid()}.qmp")
    os.makedirs(OUT, exist_ok=True)
    if os.path.exists(path):
        os.unlink(path)
    half = max(1, ops // 2)
    vm = Vm([PLUGVM, f"--chaos=seed={seed}", "--smp", "2,maxcpus=8", "--qmp", path,
             "--append", f"selftest=timer_torture,wake_torture torture.events={half} "
             "torture.seconds=86400 selftest.stay"])
    problems = []
    named = set()  # cores we added (QMP id cpuN); the boot CPUs have QOM paths only
    try:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_BOUND)
        wait_socket(path)
        q = Qmp(path, timeout=OP_BOUND)
        present, baseline = {0, 1}, None
        done = 0
        while done < ops and not problems:
            absent = sorted(set(range(8)) - present)
            removable = sorted(present - {0})
            t0 = time.monotonic()
            try:
                if absent and (not removable or rng.random() < 0.5):
                    core = rng.choice(absent)
                    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}",
                                         "socket-id": 0, "core-id": core, "thread-id": 0})
                    ev = q.wait_event("ACPI_DEVICE_OST", OP_BOUND)
                    if ev["data"]["info"]["status"] != 0:
                        problems.append(f"op {done}: add cpu{core}: {ev}")
                    present.add(core)
                    named.add(core)
                else:
                    core = rng.choice(removable)
                    name = f"cpu{core}" if core in named else \
                        f"/machine/unattached/device[{core}]"
                    q.cmd("device_del", {"id": name})
                    q.wait_event("DEVICE_DELETED", OP_BOUND)
                    ev = q.wait_event("ACPI_DEVICE_OST", OP_BOUND)
                    if ev["data"]["info"]["status"] != 0:
                        problems.append(f"op {done}: del cpu{core}: {ev}")
                    present.discard(core)
                view = {c["props"]["core-id"] for c in q.cmd("query-cpus-fast")}
                if view != present:
                    problems.append(f"op {done}: VMM view {sorted(view)} != {sorted(present)}")
                if vm.bugs():
                    problems.append(f"op {done}: the guest reported a bug")
                # A removal the guest did not finish within the VMM's bound (10 s) still
                # ends in DEVICE_DELETED once it does: a stall that long is a failure too.
                late = [e for e in q.events if e["event"] == "DEVICE_UNPLUG_GUEST_ERROR"]
                if late:
                    q.events = [e for e in q.events if e not in late]
                    problems.append(f"op {done}: DEVICE_UNPLUG_GUEST_ERROR {late[0]['data']}")
                tally.record(not problems, time.monotonic() - t0)
            except (TimeoutError, EOFError, OSError) as e:
                tally.record(False, time.monotonic() - t0, hang=True)
                problems.append(f"op {done}: {e!r}")
                vm.post_mortem()  # every CPU's NMI report, the threads, the vCPU registers
            done += 1
            if done == 200:  # every slot has had its vCPU created by now
                baseline = proc_counts(vm.proc.pid)
        # The guest's tests end once each counted its events (a few fall between the two):
        # keep adding and removing one CPU until they have, bounded.
        extra, until = 0, time.monotonic() + FULL_BOUND
        while not problems and not vm.lines(r"^selftest: \d+ passed") and \
                time.monotonic() < until:
            core = 7
            if core in present:
                q.cmd("device_del", {"id": f"cpu{core}"})
                q.wait_event("DEVICE_DELETED", OP_BOUND)
                present.discard(core)
            else:
                q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}",
                                     "socket-id": 0, "core-id": core, "thread-id": 0})
                q.wait_event("ACPI_DEVICE_OST", OP_BOUND)
                present.add(core)
                named.add(core)
            extra += 1
        for core in sorted(present - {0, 1}):
            q.cmd("device_del", {"id": f"cpu{core}"})
            q.wait_event("DEVICE_DELETED", OP_BOUND)
        end = proc_counts(vm.proc.pid)
        if baseline and (end[0] > baseline[0] or end[2] > baseline[2] * 1.25 + 4096):
            problems.append(f"VMM grew: fds/threads/RSS kB {baseline} -> {end}")
        q.cmd("quit")
        q.close()
        rc = vm.wait_exit(FULL_BOUND)
        if rc != 0 or not vm.lines(r"^selftest: 2 passed, 0 failed$"):
            problems.append(f"guest: exit {rc}, torture tests did not both pass: " + "; ".join(
                m.group(0) for m in vm.lines(r"^selftest (timer_torture|wake_torture): (pass|fail.*)$|^selftest: .*")))
        return problems, baseline, end
    except (VmFailure, TimeoutError, EOFError, OSError) as e:
        problems.append(str(e).split("\n")[0])
        return problems, None, None
    finally:
        vm.kill()
        if problems:
            keep(f"hotplug-{seed}", vm, "\n".join(problems[:20]))
        if os.path.exists(path):
            os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boots", type=int, default=1000)
    ap.add_argument("--full", type=int, default=100)
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    a = ap.parse_args()
    print(f"soak: seed={a.seed} boots={a.boots} full={a.full} ops={a.ops} jobs={a.jobs}",
          flush=True)
    tallies = [Tally("short boots", a.boots), Tally("full boots", a.full),
               Tally("hotplug ops", a.ops)]
    stop = threading.Event()
    shower = threading.Thread(target=progress, args=(tallies, stop), daemon=True)
    shower.start()
    extra = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        hp = ex.submit(hotplug, a.ops, a.seed, tallies[2]) if a.ops else None
        jobs = [(tallies[0], ex.submit(boot, i, a.seed, False)) for i in range(a.boots)]
        jobs += [(tallies[1], ex.submit(boot, i, a.seed, True)) for i in range(a.full)]
        for tally, fut in jobs:
            ok, took, hang, what = fut.result()
            tally.record(ok, took, hang, what)
        if hp:
            problems, base, end = hp.result()
            extra = {"base": base, "end": end}
            if problems and not tallies[2].failed:
                tallies[2].failed = 1  # the run as a whole (growth, the guest's verdict)
            tallies[2].failures += problems[:5]
    stop.set()
    shower.join()
    lines = ["| run | done | failed | hangs | median s | p99 s | wall s |",
             "|---|---|---|---|---|---|---|"] + [t.row() for t in tallies]
    if extra.get("base"):
        lines.append(f"\nVMM during the hotplug run (fds, threads, RSS kB): after 200 ops "
                     f"{extra['base']}, at the end {extra['end']}")
    summary = "\n".join(lines)
    print(summary)
    for t in tallies:
        for f in t.failures[:10]:
            print(f"FAIL {t.name}: {f}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "summary.md"), "w") as f:
        f.write(f"soak seed={a.seed}\n\n{summary}\n")
    return 1 if any(t.failed for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
