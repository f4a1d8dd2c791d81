# SPDX-License-Identifier: MIT
"""Timekeeping self-tests on the real VMM: LAPIC clock events, hrtimers, the wheel, nohz."""
import pytest

from vm import run_plugvm, run_selftests, selftests

TIMER_TESTS = ["timer_hrtimer_sleep", "timer_wheel_order", "timer_idle_quiet", "timer_storm",
               "timer_remote", "timer_delete_sync_expiry", "timer_idle_quiet_slow",
               "timer_rearmed_while_running"]


@pytest.mark.parametrize("build", ["mainline", "rt"])
@pytest.mark.parametrize("ncpus", [1, 4])
@pytest.mark.slow
def test_timer_selftests(build, ncpus):
    vm = run_selftests(TIMER_TESTS, "--smp", str(ncpus), build=build)
    # The clock event mode and frequency are printed at boot: plugvm offers TSC-deadline.
    assert vm.lines(r"^plugvm-guest: clock event tsc-deadline at \d+ kHz, TSC \d+ kHz, HZ 1000$")
    for ns in (100000, 1000000, 5000000):
        assert vm.lines(rf"^selftest timer_hrtimer_sleep: sleep_ns={ns} late_ns min=\d+ "), \
            vm.transcript()
    assert vm.lines(r"^selftest timer_storm: timers=600 armings=\d+ cancelled=\d+ ")
    if ncpus > 1:
        # Idle, and idle with each idle-loop pass slower than a tick (tick_idle_enter()).
        for name in ("timer_idle_quiet", "timer_idle_quiet_slow"):
            m = vm.wait_for(rf"^selftest {name}: cpu=\d+ window_ms=300 idle_delay_us=\d+ "
                            r"ticks=(\d+) wakeups=(\d+) ")
            assert int(m.group(1)) <= 30 and int(m.group(2)) <= 30, vm.transcript()


def test_oneshot_clock_event_and_other_hz():
    # One-shot LAPIC mode (the fallback without TSC-deadline) and a 250 Hz tick.
    rc, vm = run_plugvm("--smp", "2", "--append",
                        "clockevent=oneshot hz=250 selftest=timer_hrtimer_sleep,timer_wheel_order")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: clock event oneshot at \d+ kHz, TSC \d+ kHz, HZ 250$")
    assert selftests(vm) == {"timer_hrtimer_sleep": "pass", "timer_wheel_order": "pass"}
