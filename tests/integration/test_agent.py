# SPDX-License-Identifier: MIT
"""The agent channel on the real VMM: QMP commands that the guest's agent answers over the
virtio agent console. One CPU walks every cpuhp state down and up with the guest's state
checked after each step; a failure injected at every state that allows it rolls back to
where the transition started; the per-state events add up to the transitions; statistics,
workloads and the events stream; what happens without an agent.
"""
import time

import pytest

from qmp import Qmp, QmpError, wait_socket
from vm import BOOT_TIMEOUT, paused_with_qmp, plugvm

TIMEOUT = 3 * BOOT_TIMEOUT


def start(tmp_path, smp="2", append="", extra=()):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-v", "--smp", smp, "--qmp", path, *extra, "--append", append)
    wait_socket(path)
    q = Qmp(path, timeout=TIMEOUT)
    q.path = path
    return vm, q


def wait_agent(q, vm, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not q.cmd("query-agent")["connected"]:
        assert time.monotonic() < deadline, vm.transcript()
        time.sleep(0.05)


def states_of(q):
    return q.cmd("query-cpuhp-states")


def cpu_entry(q, cpu):
    return next(c for c in q.cmd("query-cpuhp") if c["cpu"] == cpu)


def crossed(a, b):
    """Ids of the states a move from a to b runs, in order: up runs the startups of
    a+1 .. b, down the teardowns of a .. b+1."""
    return list(range(a + 1, b + 1)) if b > a else list(range(a, b, -1))


def check_events(states_by_id, r):
    """The reply's per-state list: one event per callback run, in the direction of the move,
    for exactly the states crossed that have callbacks (up: all of them; down: those with a
    teardown), in table order. The one exception to the order is cpu:bringup: the kick's
    event is sent when the kick returns, and by then the arriving CPU may already have
    reported its STARTING states. The events' sum is the time spent in callbacks; the rest
    of the transition is the engine and the hand-overs, so the sum never exceeds it."""
    frm, to = r["from-id"], r["target-id"]
    up = to > frm
    ids = [e["state-id"] for e in r["states"]]
    with_callbacks = [s for s in crossed(frm, to) if states_by_id.get(s, {}).get("can-fail")]
    if up:
        assert sorted(ids) == sorted(with_callbacks), (with_callbacks, r)
    else:
        assert set(ids) <= set(with_callbacks) and len(set(ids)) == len(ids), r
    ordered = [i for i in ids if states_by_id[i]["name"] != "cpu:bringup"]
    assert ordered == sorted(ordered, reverse=not up), r
    assert all(e["direction"] == ("up" if up else "down") for e in r["states"]), r
    assert all(e["result"] == 0 and e["ns"] >= 0 for e in r["states"]), r
    assert r["states-ns"] == sum(e["ns"] for e in r["states"]), r
    assert r["states-ns"] <= r["ns"], r
    assert (r["states-ns"] > 0) == bool(ids), r


def test_walk_one_cpu_through_every_state_down_and_up(tmp_path):
    vm, q = start(tmp_path)
    with vm, q:
        wait_agent(q, vm)
        states = states_of(q)
        by_id = {s["id"]: s for s in states}
        names = [s["name"] for s in states]
        assert names[0] == "offline" and names[-1] == "online", names
        assert {s["section"] for s in states} == {"prepare", "starting", "online"}
        rest = [s["id"] for s in states if s["can-rest"]]
        mask_id = next(s["id"] for s in states if s["name"] == "cpu:online-mask")
        active_id = next(s["id"] for s in states if s["name"] == "sched:active")
        online = cpu_entry(q, 1)
        assert online["state"] == "online" and online["target"] == "online", online
        assert online["online"] and online["active"] and online["present"]
        # Down through every state a CPU may rest in, then up again the same way.
        path = sorted(rest, reverse=True)[1:] + sorted(rest)[1:]
        for sid in path:
            r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": by_id[sid]["name"]})
            assert r["success"] and r["state-id"] == sid and r["target-id"] == sid, r
            check_events(by_id, r)
            e = cpu_entry(q, 1)
            assert e["state-id"] == sid and e["target-id"] == sid, (sid, e)
            # In cpu_online_mask from cpu:online-mask on; placeable from sched:active on.
            assert e["online"] == (sid >= mask_id), (sid, e)
            assert e["active"] == (sid >= active_id), (sid, e)
        # At the ends: offline is really offline, online really online.
        assert cpu_entry(q, 1)["state"] == "online"
        r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": 0})
        assert r["success"] and r["state"] == "offline"
        e = cpu_entry(q, 1)
        assert not e["online"] and not e["active"], e
        r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": "online"})
        assert r["success"] and cpu_entry(q, 1)["online"]
        # Errors: the boot CPU, a CPU beyond the guest's, a state that is not one, a
        # state a CPU cannot rest in.
        for args, text in [({"cpu": 0, "state": "offline"}, "cpu 0 is the boot CPU"),
                           ({"cpu": 9, "state": "offline"}, "CPU number"),
                           ({"cpu": 1, "state": "nonsense"}, "not a cpuhp state"),
                           ({"cpu": 1, "state": 1000}, "not a cpuhp state id")]:
            with pytest.raises(QmpError) as ei:
                q.cmd("cpuhp-set-target", args)
            assert text in ei.value.desc, (args, ei.value.desc)
        # A state inside the atomic stretch (kick + STARTING) is no place to rest.
        with pytest.raises(QmpError) as ei:
            q.cmd("cpuhp-set-target", {"cpu": 1, "state": "tick:starting"})
        assert "state 'tick:starting' is not one a CPU can rest in" in ei.value.desc
        assert not by_id[mask_id]["can-rest"]
        assert cpu_entry(q, 1)["state"] == "online"
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def test_injected_failure_at_every_state_rolls_back(tmp_path):
    vm, q = start(tmp_path)
    with vm, q:
        wait_agent(q, vm)
        states = states_of(q)
        failable = [s for s in states if s["can-fail"]]
        assert len(failable) >= 8, failable
        down_ok = 0
        for s in failable:
            # Up: from offline, failing at s, back to offline.
            assert q.cmd("cpuhp-set-target", {"cpu": 1, "state": "offline"})["success"]
            q.cmd("cpuhp-fail", {"cpu": 1, "state": s["name"]})
            assert cpu_entry(q, 1).get("fail") == s["name"]
            r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": "online"})
            assert not r["success"] and r["failed-state"] == s["name"], (s, r)
            assert r["state"] == "offline" and r["error"] < 0, (s, r)
            e = cpu_entry(q, 1)
            assert e["state"] == "offline" and e["failed-state"] == s["name"], (s, e)
            # The rollback ran the teardown of every state the bring-up had done.
            ups = [x for x in r["states"] if x["direction"] == "up"]
            downs = [x["state-id"] for x in r["states"] if x["direction"] == "down"]
            assert [x["state-id"] for x in ups if x["result"]] == [s["id"]], (s, r)
            assert max(x["state-id"] for x in ups) == s["id"], (s, r)
            assert sorted(downs, reverse=True) == downs, (s, r)
            assert set(downs) <= {x["state-id"] for x in ups if not x["result"]}, (s, r)
            # Down: from online, failing at s, back to online, where a teardown can fail.
            assert q.cmd("cpuhp-set-target", {"cpu": 1, "state": "online"})["success"]
            if s["section"] == "starting" or s["name"] == "cpu:bringup":
                continue
            q.cmd("cpuhp-fail", {"cpu": 1, "state": s["id"]})
            r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": "offline"})
            assert not r["success"] and r["failed-state"] == s["name"], (s, r)
            assert r["state"] == "online", (s, r)
            assert cpu_entry(q, 1)["online"]
            down_ok += 1
        assert down_ok >= 3
        # Arm and clear.
        q.cmd("cpuhp-fail", {"cpu": 1, "state": failable[0]["name"]})
        q.cmd("cpuhp-fail", {"cpu": 1, "state": "none"})
        assert "fail" not in cpu_entry(q, 1)
        assert q.cmd("cpuhp-set-target", {"cpu": 1, "state": "offline"})["success"]
        with pytest.raises(QmpError):
            q.cmd("cpuhp-fail", {"cpu": 1, "state": "offline"})  # nothing to fail there
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def test_state_events_add_up_to_the_transition(tmp_path):
    vm, q = start(tmp_path, smp="3")
    with vm, q, Qmp(q.path) as watcher:
        wait_agent(q, vm)
        watcher.cmd("cpuhp-subscribe")
        by_id = {s["id"]: s for s in states_of(q)}
        for cpu, target in [(1, "offline"), (2, "offline"), (1, "online"), (2, "online")]:
            r = q.cmd("cpuhp-set-target", {"cpu": cpu, "state": target})
            assert r["success"], r
            check_events(by_id, r)
            # The subscriber saw the same callbacks, in the same order, with the same times.
            seen = []
            while len(seen) < len(r["states"]):
                ev = watcher.wait_event("CPUHP_STATE", TIMEOUT)["data"]
                if ev["cpu"] == cpu:
                    seen.append(ev)
            assert seen == r["states"], (seen, r)
        # The client that did not subscribe got none of them.
        assert not [e for e in q.events if e["event"] == "CPUHP_STATE"]
        # ACPI-driven removal shows up in the stream too.
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        q.cmd("device_del", {"id": "/machine/unattached/device[2]"})
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        downs = set()
        while "percpu:prepare" not in downs:
            ev = watcher.wait_event("CPUHP_STATE", TIMEOUT)["data"]
            if ev["cpu"] == 2 and ev["direction"] == "down":
                downs.add(ev["state"])
        assert downs, downs
        watcher.cmd("cpuhp-subscribe", {"enable": False})
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def wait_online_ost(q):
    while True:
        info = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)["data"]["info"]
        if info["source"] == 1:
            assert info["status"] == 0, info
            return


def test_state_events_only_while_someone_listens(tmp_path):
    """Each STATE event costs the guest a virtio message: without a subscriber the guest
    sends none for an ACPI hot-remove or hot-add; a subscription turns them on before its
    reply; a subscriber that disconnects turns them off again (at the next event)."""
    vm, q = start(tmp_path, smp="3")
    with vm, q:
        wait_agent(q, vm)
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        before = q.cmd("query-agent")["events"]
        q.cmd("device_del", {"id": "/machine/unattached/device[2]"})
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        slot = [s for s in q.cmd("query-hotpluggable-cpus") if "qom-path" not in s][0]
        q.events.clear()  # the removal's _OST
        q.cmd("device_add", dict(slot["props"], driver=slot["type"], id="c2"))
        wait_online_ost(q)
        q.cmd("query-cpuhp")  # answered after anything the guest sent before
        assert q.cmd("query-agent")["events"] == before
        with Qmp(q.path) as watcher:
            watcher.cmd("cpuhp-subscribe")
            q.cmd("device_del", {"id": "c2"})
            q.wait_event("DEVICE_DELETED", TIMEOUT)
            ev = watcher.wait_event("CPUHP_STATE", TIMEOUT)["data"]
            assert ev["cpu"] == 2 and ev["direction"] == "down", ev
        # The watcher left subscribed. The next events turn them off; SET_TARGET's own
        # transition still reports its callbacks to its reply.
        r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": "offline"})
        assert r["success"] and r["states"], r
        q.cmd("query-cpuhp")
        before = q.cmd("query-agent")["events"]
        q.events.clear()
        q.cmd("device_add", dict(slot["props"], driver=slot["type"], id="c3"))
        wait_online_ost(q)
        q.cmd("query-cpuhp")
        assert q.cmd("query-agent")["events"] == before
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def test_statistics_and_workload(tmp_path):
    vm, q = start(tmp_path)
    with vm, q:
        wait_agent(q, vm)
        a = q.cmd("query-agent")
        assert a["present"] and a["cpus"] == 2 and a["states"] >= 16, a
        w = q.cmd("workload-start", {"kind": "mixed", "threads": 4, "period-us": 500})
        with pytest.raises(QmpError) as ei:
            q.cmd("workload-start", {"kind": "hog"})
        assert "Device or resource busy" in ei.value.desc
        # Churn CPU 1 while it runs: the workload survives.
        for target in ["offline", "online", "offline", "online"]:
            assert q.cmd("cpuhp-set-target", {"cpu": 1, "state": target})["success"]
        res = q.cmd("workload-stop", {"id": w["id"]})
        assert res["id"] == w["id"] and res["threads"] == 4, res
        assert res["iterations"] > 0 and res["timers-armed"] > 0 and res["ns"] > 0, res
        assert res["timers-cancelled"] > 0 or res["timers-fired"] > 0, res
        with pytest.raises(QmpError):
            q.cmd("workload-stop", {"id": w["id"]})
        timers = q.cmd("query-timers")
        assert [t["cpu"] for t in timers] == [0, 1], timers
        t0 = timers[0]
        assert len(t0["levels"]) == 9 and t0["ticks"] > 0 and t0["tick-ns"] > 0, t0
        assert sum(l["added"] for t in timers for l in t["levels"]) > 0
        assert q.cmd("query-timers", {"cpu": 1})[0]["cpu"] == 1
        sched = q.cmd("query-sched")
        assert [s["cpu"] for s in sched] == [0, 1] and sched[0]["switches"] > 0, sched
        assert sched[1]["migrations-in"] + sched[1]["migrations-out"] > 0, sched
        locks = q.cmd("query-locks")
        assert locks["enabled"] and locks["acquisitions"] > 0 and locks["classes"] > 0, locks
        for bad in [{"kind": "fork-bomb"}, {"kind": "hog", "threads": 0},
                    {"kind": "hog", "period-us": 1}]:
            with pytest.raises(QmpError):
                q.cmd("workload-start", bad)
        with pytest.raises(QmpError):
            q.cmd("query-timers", {"cpu": 5})
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def test_without_an_agent_commands_fail_cleanly(tmp_path):
    vm, q = start(tmp_path, extra=("--virtio", "off"))
    with vm, q:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        a = q.cmd("query-agent")
        assert not a["present"] and not a["connected"], a
        for name, args in [("query-cpuhp-states", None), ("query-cpuhp", None),
                           ("cpuhp-set-target", {"cpu": 1, "state": "offline"}),
                           ("cpuhp-fail", {"cpu": 1, "state": 1}), ("query-timers", None),
                           ("query-sched", None), ("query-locks", None),
                           ("workload-start", {"kind": "hog"})]:
            with pytest.raises(QmpError) as ei:
                q.cmd(name, args)
            assert "not connected" in ei.value.desc, (name, ei.value.desc)
        # ACPI hotplug does not need the agent.
        q.cmd("device_del", {"id": "/machine/unattached/device[1]"})
        q.wait_event("DEVICE_DELETED", TIMEOUT)
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def test_lock_validator_warnings_become_qmp_events(tmp_path):
    # The guest's lock_inversion self-test takes two locks in both orders on purpose; the
    # validator's report reaches the host as an EV_LOCKDEP agent event, and QMP clients
    # get GUEST_LOCKDEP_WARNING. -S: the client is there before the guest runs.
    with paused_with_qmp(tmp_path, "--smp", "2", "--append",
                         "selftest=lock_inversion selftest.stay", qmp_timeout=TIMEOUT) as (vm, q):
        ev = q.wait_event("GUEST_LOCKDEP_WARNING", TIMEOUT)["data"]
        assert (ev["type"], ev["type-id"]) == ("inversion", 0), ev
        assert {ev["lock"], ev["held"]} == {"selftest.A", "selftest.B"}, ev
        vm.wait_for(r"^selftest: done \(all passed\), staying up$", TIMEOUT)
        assert q.cmd("query-locks")["reports"] >= 1
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()
