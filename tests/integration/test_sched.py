# SPDX-License-Identifier: MIT
"""The scheduler and local_lock self-tests on the real VMM, in the default and RT builds."""
import pytest

from vm import GUESTS, run_plugvm, run_selftests, selftests

SCHED_TESTS = ["sched_threads", "sched_wake_irq", "sched_wake_ipi", "sched_preempt_sleep",
               "sched_atomic_sleep", "sched_migrate", "sched_deactivate_starve", "lock_local",
               "lock_preempt", "lock_pi", "lock_inversion"]


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.parametrize("ncpus", [1, 4])
@pytest.mark.slow
def test_sched_selftests(build, ncpus):
    vm = run_selftests(SCHED_TESTS, "--smp", str(ncpus), build=build)
    # The deliberate sleep with preemption disabled is reported, and the system survives.
    assert vm.lines(r"^expected BUG: scheduling while atomic: thread atomic-sleeper "), vm.transcript()
    # Threads spread over every CPU; wake-up latencies are measured and reported.
    assert vm.lines(rf"^selftest sched_threads: threads=\d+ cpus={ncpus} cpus_used={ncpus}$")
    assert vm.lines(r"^selftest sched_wake_irq: irq_to_thread_cycles min=\d+ avg=\d+ max=\d+")
    if ncpus > 1:
        assert vm.lines(r"^selftest sched_wake_ipi: ipi_wake_to_thread_cycles min=\d+")
        assert vm.lines(r"^selftest sched_migrate: cpu=\d+ moved_to=\d+ parked_then_ran_on=")
        assert vm.lines(r"^selftest sched_deactivate_starve: cpu=\d+ deactivate_ms=\d+$")
    # What a local_lock holder allows depends on the build.
    held = "1" if build == "rt" else "0"
    assert vm.lines(rf"^selftest lock_preempt: .* high_ran_while_low_held_lock={held} ")
    assert vm.lines(rf"^selftest lock_local: build={build}$"), vm.transcript()
    if build == "rt":
        assert vm.lines(r"^selftest lock_pi: .* holder_boosted_to=90$"), vm.transcript()
    assert vm.lines(r"^expected lockdep: .*lock order inversion"), vm.transcript()


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.slow
def test_all_selftests_on_8_cpus(build):
    rc, vm = run_plugvm("--kernel", GUESTS[build], "--smp", "8", "--append", "selftest=all")
    results = selftests(vm)
    assert rc == 0, vm.transcript()
    assert results and all(r == "pass" for r in results.values()), results
