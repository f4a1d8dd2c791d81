# SPDX-License-Identifier: MIT
"""plugvm --chaos on the real VMM: the guest boots and powers off under the default chaos
(both builds), the seed line is always printed and seed= is honoured, each component can be
turned off, bad specs are refused with status 2 and a line naming the bad part, and CPUs
hot-added under chaos come up late exactly as the seed says (the VMM's per-vCPU streams are
recomputed here from the seed) while add, remove and re-add still work.
"""
import pytest

from qmp import Qmp, wait_socket
from test_errors import USAGE, assert_error, run
from vm import BOOT_TIMEOUT, GUESTS, plugvm, run_plugvm

TIMEOUT = 3 * BOOT_TIMEOUT
SEED_LINE = r"^plugvm: chaos: seed=(\d+) stall=(\S+) irq=(\S+) start=(\S+)$"
SUMMARY = (r"^plugvm: chaos: seed=(\d+): (\d+) stalls \([\d.]+ ms\), (\d+) irq delays "
           r"\([\d.]+ ms; (\d+) changes queued, (\d+) overflows\), (\d+) start delays")

# vmm/chaos.c's streams, for predicting what a seed decides.
MASK = (1 << 64) - 1
GOLDEN = 0x9e3779b97f4a7c15
ROLE_START = 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
    return z ^ (z >> 31)


class Stream:
    def __init__(self, seed, role, ident):
        self.state = mix64(seed ^ mix64((((role << 32) | ident) + GOLDEN) & MASK))

    def draw(self, ppm, max_us):
        """0 or a delay in 1..max_us, as chaos_draw()."""
        self.state = (self.state + GOLDEN) & MASK
        r = mix64(self.state)
        if ((r >> 32) * 1000000) >> 32 >= ppm:
            return 0
        return (((r & 0xffffffff) * max_us) >> 32) + 1


def one(vm, pattern, stream="stderr"):
    found = vm.lines(pattern, stream)
    assert len(found) == 1, vm.transcript()
    return found[0]


@pytest.mark.parametrize("build", ["mainline", "rt"])
def test_default_chaos_boots(build):
    rc, vm = run_plugvm("--kernel", GUESTS[build], "--smp", "4,maxcpus=8", "--chaos",
                        "--append", "halt")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: 4/4 CPUs online$"), vm.transcript()
    start = one(vm, SEED_LINE)
    assert start.groups()[1:] == ("20%:5000us", "50%:2000us", "20000us"), start.group(0)
    # The seed comes back at exit with what chaos did: a boot re-enters KVM_RUN ~140 times,
    # so at 20% some vCPU stalled (0.8^140 ~ 1e-14).
    end = one(vm, SUMMARY)
    assert end.group(1) == start.group(1)
    assert int(end.group(2)) > 0, end.group(0)
    assert int(end.group(6)) == 0, end.group(0)  # no hot-add, no start delay


def test_seed_honoured_and_components_off():
    rc, vm = run_plugvm("--smp", "4,maxcpus=8", "--chaos=irq=off,seed=12345,stall=10%:1ms",
                        "--append", "halt")
    assert rc == 0, vm.transcript()
    # Printed in the canonical form, keys in a fixed order, times in us.
    one(vm, r"^plugvm: chaos: seed=12345 stall=10%:1000us irq=off start=20000us$")
    end = one(vm, SUMMARY)
    assert end.group(1) == "12345"
    assert int(end.group(2)) > 0, end.group(0)
    assert end.group(3, 4) == ("0", "0"), end.group(0)  # irq=off: nothing delayed or queued
    # -q keeps the seed line (a failing run must be replayable), drops the summary.
    rc, vm = run_plugvm("-q", "--chaos=seed=1,stall=0", "--append", "halt")
    assert rc == 0, vm.transcript()
    one(vm, r"^plugvm: chaos: seed=1 stall=off irq=50%:2000us start=20000us$")
    assert not vm.lines(SUMMARY, "stderr"), vm.transcript()


def test_no_chaos_without_the_flag():
    rc, vm = run_plugvm("--append", "halt")
    assert rc == 0, vm.transcript()
    assert not vm.lines(r"chaos", "stderr"), vm.transcript()


@pytest.mark.parametrize("args,pattern", [
    (["--chaos="], r"^plugvm: --chaos: empty spec"),
    (["--chaos=seed=abc"], r"--chaos: bad seed 'abc'"),
    (["--chaos=seed=18446744073709551616"], r"--chaos: bad seed"),
    (["--chaos=stall=5%2ms"], r"--chaos: bad stall value '5%2ms'"),
    (["--chaos=irq=7"], r"--chaos: bad irq value '7'"),
    (["--chaos=irq=2s"], r"--chaos: irq time '2s' exceeds 1s"),
    (["--chaos=start=101%:1ms"], r"--chaos: start probability '101%' exceeds 100%"),
    (["--chaos=seed=1,bogus=1"], r"--chaos: unknown key 'bogus' in 'seed=1,bogus=1'"),
    (["--chaos=stall=0,stall=1ms"], r"--chaos: 'stall' given twice"),
    (["--chaos=seed=1,"], r"--chaos: empty item"),
    (["--chaos=stall"], r"--chaos: 'stall' is not KEY=VALUE"),
    (["--chaos", "seed=1"], r"unexpected argument 'seed=1'"),
])
def test_bad_specs(args, pattern):
    proc = run(*args, "--append", "halt")
    assert_error(proc, USAGE, pattern)
    assert "chaos: seed=" not in proc.stderr  # refused before anything ran


def add(q, core):
    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}", "socket-id": 0,
                         "core-id": core, "thread-id": 0})
    ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ev["data"]["info"] == {"device": f"cpu{core}", "source": 1, "status": 0,
                                  "slot": str(core), "slot-type": "CPU"}, ev


def remove(q, core):
    q.cmd("device_del", {"id": f"cpu{core}"})
    ev = q.wait_event("DEVICE_DELETED", TIMEOUT)
    assert ev["data"]["device"] == f"cpu{core}", ev
    ost = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ost["data"]["info"]["source"] == 3 and ost["data"]["info"]["status"] == 0, ost


def cores(q):
    return sorted(c["props"]["core-id"] for c in q.cmd("query-cpus-fast"))


# Adds (+) and removes (-), with re-adds of parked vCPUs.
STEPS = [+2, +3, +4, +5, -5, -3, +3, +5, -2, -3, -4, -5, +4, +2]
START = (500000, 20000)  # start=50%:20ms


def predicted_starts(seed):
    """[(vCPU, us)] for the delayed starts of STEPS' adds, in order: vCPU k's n-th add takes
    the n-th draw of the stream (seed, start, k)."""
    streams, out = {}, []
    for step in STEPS:
        if step > 0:
            us = streams.setdefault(step, Stream(seed, ROLE_START, step)).draw(*START)
            if us:
                out.append((step, us))
    return out


def seed_with_mixed_starts():
    """The first seed from 1000 whose adds are some delayed, some not: the test then sees
    both decisions and cannot pass by delaying everything or nothing."""
    nr_adds = sum(1 for s in STEPS if s > 0)
    return next(s for s in range(1000, 2000) if 3 <= len(predicted_starts(s)) <= nr_adds - 3)


@pytest.mark.parametrize("start_path", ["direct", "init-sipi"])
def test_hotplug_under_chaos(tmp_path, start_path):
    seed = seed_with_mixed_starts()
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-v", "--smp", "2,maxcpus=8", "--qmp", path,
                f"--chaos=seed={seed},start={START[0] // 10000}%:{START[1] // 1000}ms",
                "--append", "smp.direct_start=0" if start_path == "init-sipi" else "")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            now = {0, 1}
            for step in STEPS:
                if step > 0:
                    add(q, step)
                    now.add(step)
                else:
                    remove(q, -step)
                    now.discard(-step)
                assert cores(q) == sorted(now)
            q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()
    one(vm, rf"^plugvm: chaos: seed={seed} stall=20%:5000us irq=50%:2000us start=50%:20000us$")
    # Every hot-add drew from its vCPU's own stream: the delays are exactly the seed's.
    starts = [(int(m.group(1)), int(m.group(2))) for m in
              vm.lines(r"^plugvm: vCPU (\d+): chaos: start delayed (\d+) us \(slept (\d+) us\)$",
                       "stderr")]
    assert starts == predicted_starts(seed), vm.transcript()
    for m in vm.lines(r"^plugvm: vCPU \d+: chaos: start delayed (\d+) us \(slept (\d+) us\)$",
                      "stderr"):
        assert int(m.group(2)) >= int(m.group(1)), m.group(0)  # never shorter than drawn
    end = one(vm, SUMMARY)
    assert int(end.group(6)) == len(starts), end.group(0)
