# SPDX-License-Identifier: MIT
"""Latency stress runs: build/plugvm-latency against the real VMM, both guest builds;
query-latency and `plugctl latency` on a running measurement; bad options. Runs of a few
seconds: guest CPL0 is emulated here, so latencies are milliseconds and most periods are
missed; the checks are consistency (every period sampled, missed or parked), never speed."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from qmp import Qmp, wait_socket
from vm import GUESTS, PLUGVM, ROOT, plugvm, run_plugvm

LATENCY = os.environ.get("PLUGVM_LATENCY_BIN", os.path.join(ROOT, "build", "plugvm-latency"))
PLUGCTL = os.environ.get("PLUGCTL_BIN", os.path.join(ROOT, "build", "plugctl"))
# cyclictest's line: "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld"
TLINE = re.compile(r"^T:([ \d]\d) \(([ \d]{4}\d)\) P:(\d\d) I:(\d+) C:([ \d]{6}\d) "
                   r"Min:([ \d]{6}\d) Act:([ \d]{4}\d) Avg:([ \d]{4}\d) Max:([ \d]{7}\d)$")
RUN_TIMEOUT = 300  # a bound against hangs: boot, the run, the end, on a loaded host


def run_latency(*args, build="mainline", timeout=RUN_TIMEOUT):
    argv = [LATENCY, "--plugvm", PLUGVM, "--kernel", GUESTS[build], *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def tlines(out):
    return [TLINE.match(line) for line in out.splitlines() if line.startswith("T:")]


def check_periods(cpu, duration_s, interval_us):
    """Every period is accounted exactly once: sampled, skipped by a late wake-up (missed) or
    spent parked. The guest measures from its boot until the tool's last query, a little
    longer than the run; its TSC stands still while its vCPU thread waits for a host CPU
    (on this shared host that can be most of the run), so guest time has only this upper
    bound against the host's duration."""
    periods_us = (cpu["count"] + cpu["missed"]) * interval_us
    assert periods_us + cpu["parked-us"] == cpu["elapsed-us"], cpu
    assert 0 < cpu["elapsed-us"] <= (duration_s + 10) * 1_000_000, (cpu, duration_s)


def check_histogram_file(path, counts):
    rows, totals, summary = [], None, {}
    for line in open(path):
        if line.startswith("# Total:"):
            totals = [int(v) for v in line.split()[2:]]
        elif line.startswith("# ") and ":" in line:
            key, _, vals = line[2:].partition(":")
            summary[key] = [int(v) for v in vals.split()]
        elif not line.startswith("#"):
            rows.append([int(v) for v in line.split()])
    assert rows and [r[0] for r in rows] == list(range(len(rows)))
    sums = [sum(r[i + 1] for r in rows) for i in range(len(counts))]
    assert sums == totals
    assert [t + o for t, o in zip(totals, summary["Histogram Overflows"])] == counts
    for lo, avg, hi in zip(summary["Min Latencies"], summary["Avg Latencies"],
                           summary["Max Latencies"]):
        assert lo <= avg <= hi


@pytest.mark.slow
def test_latency_with_churn(tmp_path):
    """The issue's own check: two CPUs of four, CPU 1 removed and re-added every 200 ms (with
    the wake-up storm and local_lock contention, whose threads are parked with CPU 1 too)."""
    h, png, js, con = (tmp_path / n for n in ("H", "P.png", "run.json", "console.txt"))
    p = run_latency("--smp", "2,maxcpus=4", "--duration", "4", "--interval", "1000", "--churn",
                    "200", "--stress", "ipi,locks", "--histogram", str(h), "--plot", str(png), "--json", str(js),
                    "--console", str(con))
    assert p.returncode == 0, p.stdout + p.stderr
    console = con.read_text()
    assert not re.search(r"^(BUG|lockdep): ", console, re.M), console
    lines = tlines(p.stdout)
    assert len(lines) == 2 and all(lines), p.stdout
    progress = [l for l in p.stderr.splitlines() if re.match(r"plugvm-latency: +\d+/4 s: ", l)]
    assert len(progress) >= 2, p.stderr
    summary = json.loads(js.read_text())
    for m, cpu in zip(lines, summary["cpus"]):
        lo, avg, hi = int(m.group(6)), int(m.group(8)), int(m.group(9))
        assert int(m.group(1)) == cpu["cpu"] and int(m.group(5)) == cpu["count"] > 0
        assert 0 <= lo <= avg <= hi, m.group(0)
        assert int(m.group(3)) == 99 and int(m.group(4)) == 1000
        check_periods(cpu, 4, 1000)
    check_histogram_file(h, [c["count"] for c in summary["cpus"]])
    # No measurement thread lost: CPU 1's was parked once per removal (the last unpark may
    # not have been seen by its thread when the run ended) and it measured again after.
    cycles = summary["churn-cycles"]
    assert cycles >= 2, p.stdout
    # The final figures are the guest's last whole record, never an earlier read's.
    assert not any(c["stale"] for c in summary["cpus"]), (summary["cpus"], p.stderr)
    cpu1 = summary["cpus"][1]
    assert cycles - 1 <= cpu1["parks"] <= cycles and cpu1["parked-us"] > 0, (cycles, cpu1)
    assert f"# churn: {cycles} hotplug cycles (remove and re-add) in 4 s, " \
        f"{summary['churn-failures']} removals refused or late" in p.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000



def vm_child(tool_pid, timeout=60.0):
    """The pid and --qmp path of the plugvm that plugvm-latency `tool_pid` started, once its
    socket listens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{tool_pid}/task/{tool_pid}/children") as f:
            for child in f.read().split():
                with open(f"/proc/{child}/cmdline", "rb") as c:
                    argv = c.read().decode().split("\0")
                if "--qmp" in argv:
                    path = argv[argv.index("--qmp") + 1].removeprefix("unix:")
                    wait_socket(path, timeout=max(deadline - time.monotonic(), 1))
                    return int(child), path
        time.sleep(0.05)
    raise AssertionError("plugvm-latency started no plugvm with --qmp")


def vm_qmp_path(tool_pid, timeout=60.0):
    return vm_child(tool_pid, timeout)[1]


def proc_state(pid):
    """A process's state letter (R, S, Z, ...), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def end_tool(p):
    """End plugvm-latency as a user would (SIGTERM: it ends its VM and reports)."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_vm_ends_with_a_killed_tool():
    """plugvm-latency killed outright (SIGKILL, no cleanup of its own): its VM still ends,
    told by the kernel (PR_SET_PDEATHSIG). The 30 s bound is against a hang."""
    argv = [LATENCY, "--plugvm", PLUGVM, "--kernel", GUESTS["mainline"], "--duration", "60"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    vm_pid = None
    try:
        vm_pid, _ = vm_child(p.pid)
        p.kill()
        p.wait()
        deadline = time.monotonic() + 30
        while proc_state(vm_pid) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        state = proc_state(vm_pid) or "gone"
        assert state in ("Z", "gone"), f"plugvm {vm_pid} still {state} after its tool died"
    finally:
        end_tool(p)
        if vm_pid and proc_state(vm_pid) not in (None, "Z"):
            os.kill(vm_pid, signal.SIGKILL)  # the orphan a failure leaves


@pytest.mark.slow
def test_progress_goes_on_while_a_hotplug_cycle_waits():
    """The guest paused (QMP stop) while --churn runs: the cycle in flight waits for the
    guest's answer, and the progress line still comes every second; after cont the cycle
    completes and the run reports as usual. The 15 s bound is against a hang."""
    argv = [LATENCY, "--plugvm", PLUGVM, "--kernel", GUESTS["mainline"], "--smp", "2,maxcpus=4",
            "--duration", "8", "--churn", "200"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress = re.compile(r"plugvm-latency: +(\d+)/8 s: ")
    try:
        seen, stopped_at = [], None
        with Qmp(vm_qmp_path(p.pid)) as q:
            for line in p.stderr:
                m = progress.match(line)
                if not m:
                    continue
                seen.append(int(m.group(1)))
                if stopped_at is None:
                    q.cmd("stop")
                    stopped_at = time.monotonic()
                elif len(seen) == 3:
                    assert q.cmd("query-status")["status"] == "paused"
                    assert time.monotonic() - stopped_at < 15, seen
                    q.cmd("cont")
                    break
        rest = p.stderr.read()
        out = p.stdout.read()
        assert p.wait(timeout=RUN_TIMEOUT) == 0, out + rest
    finally:
        end_tool(p)
    assert seen == [1, 2, 3], seen
    assert [int(m.group(1)) for m in progress.finditer(rest)] == [4, 5, 6, 7], rest
    assert re.search(r"^# churn: \d+ hotplug cycles \(remove and re-add\) in 8 s, \d+ removals "
                     r"refused or late", out, re.M), out + rest

def test_latency_rt_build_with_stress_and_compare(tmp_path):
    """The RT guest under every stress; the plot compares it with a second run."""
    first, second, png = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "cmp.png"
    p = run_latency("--smp", "2", "--duration", "2", "--interval", "2000", "--stress",
                    "hogs,timers,ipi,locks", "--histogram-max", "500", "--threshold", "300", "--json",
                    str(first), build="rt")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = tlines(p.stdout)
    assert len(lines) == 2 and all(lines), p.stdout
    run = json.loads(first.read_text())
    assert run["build"] == "rt" and run["stress"] == "hogs,timers,ipi,locks"
    for cpu in run["cpus"]:
        assert cpu["count"] > 0 and len(cpu["histogram"]) == 500
        assert sum(cpu["histogram"]) + cpu["overflows"] == cpu["count"]
        check_periods(cpu, 2, 2000)
    assert run["percentiles"]["p50-us"] >= 0
    p = run_latency("--smp", "1", "--duration", "1", "--json", str(second), "--plot", str(png),
                    "--compare", str(first))
    assert p.returncode == 0, p.stdout + p.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_query_latency_and_plugctl_live(tmp_path):
    """A measurement booted by hand: QMP query-latency and `plugctl latency` read it live."""
    sock = str(tmp_path / "qmp")
    with plugvm("--smp", "2", "--kernel", GUESTS["mainline"], "--qmp", f"unix:{sock}", "--append",
                "latency latency.interval_us=500 latency.cpus=1 latency.threshold_us=1") as vm:
        vm.wait_for(r"^latency: 1 threads, interval 500 us, priority 99")
        wait_socket(sock)
        with Qmp(sock) as q:
            first = q.cmd("query-latency")
            assert first["active"] and [c["cpu"] for c in first["cpus"]] == [1]
            assert first["build"] == "default" and first["interval-us"] == 500
            deadline = time.monotonic() + 60  # a bound against a hang: wait for samples
            while q.cmd("query-latency")["cpus"][0]["count"] < 3:
                assert time.monotonic() < deadline, "no samples within 60 s"
                time.sleep(0.05)
            # Threshold 1 us: every sample is an outlier, and the guest counts it in the
            # outlier total before it publishes the sample, so no snapshot has a sample
            # without its outlier (the host reads the samples first). Many snapshots, to
            # land some between the guest's two steps.
            for _ in range(300):
                snap = q.cmd("query-latency")
                assert snap["outliers-total"] >= snap["cpus"][0]["count"], snap
            later = q.cmd("query-latency", {"histogram": True})
            cpu = later["cpus"][0]
            assert cpu["count"] >= 3 and cpu["priority"] == 99
            assert sum(cpu["histogram"]) + cpu["overflows"] == cpu["count"]
            assert later["outliers-total"] >= cpu["count"], later
            kept = min(later["outliers-total"], 256)  # the ring; less those caught mid-write
            assert kept - later["torn"] <= len(later["outliers"]) <= kept, later
            assert all(o["cpu"] == 1 and o["latency-ns"] > 1000 for o in later["outliers"])
            e = q.execute("query-latency", {"histogram": 3})
            assert e["error"]["class"] == "GenericError", e
            p = subprocess.run([PLUGCTL, "-s", sock, "latency"], capture_output=True,
                               text=True, timeout=60)
            assert p.returncode == 0 and TLINE.match(p.stdout.splitlines()[0]), p.stdout
            q.cmd("quit")
        vm.wait_exit()


def test_latency_from_a_libvirt_domain(tmp_path):
    """--domain runs the VM from libvirt's RT-tuned document (its vCPU count, pinning, FIFO
    vCPUs and locked memory), the measurement's words in place of its <cmdline>."""
    console = tmp_path / "console.log"
    p = run_latency("--domain", os.path.join(ROOT, "configs", "libvirt", "plugvm-rt.xml"),
                    "--duration", "2", "--console", str(console), build="rt")
    assert p.returncode == 0, p.stdout + p.stderr + console.read_text()
    lines = tlines(p.stdout)
    assert len(lines) == 2 and all(lines), p.stdout
    assert "latency" in console.read_text(), console.read_text()


@pytest.mark.parametrize("args,message", [
    (["--duration", "0"], "--duration: '0' is not a number from 1 to 86400"),
    (["--interval", "5x"], "--interval: '5x' is not a number"),
    (["--stress", "hogs,forks"], "--stress: 'forks' is not one of hogs, timers, ipi, locks"),
    (["--plot", "out.svg"], "--plot: 'out.svg' must end in .png"),
    (["--compare", "x.json"], "--compare needs --plot"),
    (["--cpus", "0;reboot"], "--cpus: '0;reboot' may hold only"),
    (["--bogus"], "unrecognized option"),
    (["--rt", "--kernel", "x"], "--rt and --kernel"),
    (["--domain", "/nonexistent.xml"], "--domain: /nonexistent.xml: No such file"),
])
def test_latency_bad_options(args, message):
    p = subprocess.run([LATENCY, *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and message in p.stderr, (args, p.returncode, p.stderr)


@pytest.mark.parametrize("word,why", [
    ("latency.cpus=0,99", "is not a list of possible CPUs"),
    ("latency.stress=locks,", "is not a list of hogs, timers, ipi, locks"),
])
def test_latency_bad_guest_words(word, why):
    rc, vm = run_plugvm("--smp", "2", "--kernel", GUESTS["mainline"], "--append", f"latency {word}")
    assert rc == 7 and vm.lines(rf"^cmdline: '{re.escape(word)}' {why}"), vm.transcript()
