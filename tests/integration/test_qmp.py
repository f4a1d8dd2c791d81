# SPDX-License-Identifier: MIT
"""The control socket on the real VMM: QMP's greeting, negotiation and QEMU-shaped replies,
events, every kind of bad input (the VMM keeps running with unchanged fd and thread counts),
many clients at once, quit, signals, the default socket path and unusable paths.
The client is tests/integration/qmp.py: Python's standard library speaking QMP as QEMU
documents it.
"""
import json
import os
import signal
import socket
import stat
import time

import pytest

from qmp import Qmp, QmpError, wait_socket
from vm import BOOT_TIMEOUT, paused_with_qmp, plugvm, ready_with_qmp, run_plugvm


def start(tmp_path, smp="2,maxcpus=4", extra=()):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", smp, "--qmp", f"unix:{path},server,nowait", "--append", "", *extra)
    vm.wait_for(r"CPUs online", BOOT_TIMEOUT)
    wait_socket(path)
    return vm, path


def counts(pid):
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def settle(pid, want, timeout=10.0):
    """fd/thread counts once the server has seen every close (it runs on its own time)."""
    deadline = time.monotonic() + timeout
    while counts(pid) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    return counts(pid)


def test_greeting_and_queries(tmp_path):
    vm, path = start(tmp_path)
    with vm:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with Qmp(path, negotiate=False) as q:
            assert q.greeting["QMP"]["version"]["package"].startswith("plugvm ")
            assert set(q.greeting["QMP"]["version"]["qemu"]) == {"major", "minor", "micro"}
            assert q.greeting["QMP"]["capabilities"] == []
            r = q.execute("query-status")
            assert r["error"]["class"] == "CommandNotFound", r
            assert q.cmd("qmp_capabilities") == {}
            assert q.cmd("query-status") == {"status": "running", "singlestep": False,
                                             "running": True}
            assert q.cmd("query-version")["package"] == q.greeting["QMP"]["version"]["package"]
            names = {c["name"] for c in q.cmd("query-commands")}
            assert {"qmp_capabilities", "query-status", "query-cpus-fast",
                    "query-hotpluggable-cpus", "quit"} <= names

            cpus = q.cmd("query-cpus-fast")
            assert [c["cpu-index"] for c in cpus] == [0, 1]
            for i, c in enumerate(cpus):
                assert c["props"] == {"socket-id": 0, "core-id": i, "thread-id": 0}
                assert c["target"] == "x86_64"
                # thread-id is the host thread running that vCPU.
                assert os.path.exists(f"/proc/{vm.proc.pid}/task/{c['thread-id']}")
            slots = q.cmd("query-hotpluggable-cpus")
            assert [s["props"]["core-id"] for s in slots] == [3, 2, 1, 0]
            assert ["qom-path" in s for s in slots] == [False, False, True, True]
            assert all(s["vcpus-count"] == 1 and s["type"].endswith("-x86_64-cpu")
                       for s in slots)
            # The same answers, verbatim, as one JSON text split over several writes.
            q.send_raw('{"execute": "query-')
            time.sleep(0.05)
            q.send_raw('status", "id": [1, {"a": null}]}\r\n')
            assert q.recv() == {"return": {"status": "running", "singlestep": False,
                                           "running": True}, "id": [1, {"a": None}]}


def test_topology_props(tmp_path):
    vm, path = start(tmp_path, smp="1,sockets=2,cores=2,threads=2")
    with vm, Qmp(path) as q:
        slots = q.cmd("query-hotpluggable-cpus")
        props = [s["props"] for s in reversed(slots)]
        assert props[0] == {"socket-id": 0, "core-id": 0, "thread-id": 0}
        assert props[1] == {"socket-id": 0, "core-id": 0, "thread-id": 1}
        assert props[2] == {"socket-id": 0, "core-id": 1, "thread-id": 0}
        assert props[7] == {"socket-id": 1, "core-id": 1, "thread-id": 1}


def test_bad_input_keeps_vm_running(tmp_path):
    vm, path = start(tmp_path)
    with vm:
        pid = vm.proc.pid
        keeper = Qmp(path)
        before = counts(pid)

        with Qmp(path) as q:
            for raw, cls, desc in [
                ("this is not json\n", "GenericError", "JSON parse error"),
                ("[1, 2, 3]\n", "GenericError", "must be a JSON object"),
                ('"a string"\n', "GenericError", "must be a JSON object"),
                ('{"execute": "no-such-command"}\n', "CommandNotFound", "no-such-command"),
                ('{"execute": 42}\n', "GenericError", "'execute' must be a string"),
                ('{"arguments": {}}\n', "GenericError", "lacks member 'execute'"),
                ('{"execute": "quit", "arguments": {"now": true}}\n', "GenericError",
                 "Parameter 'now' is unexpected"),
                ('{"execute": "query-status", "arguments": "x"}\n', "GenericError",
                 "'arguments' must be an object"),
                ('{"execute": "qmp_capabilities", "arguments": {"enable": "oob"}}\n',
                 "CommandNotFound", "already complete"),
                ("[" * 200 + "\n", "GenericError", "JSON parse error"),
                ('{"execute": "query-status"\x00}\n', "GenericError", "JSON parse error"),
            ]:
                q.send_raw(raw)
                r = q.recv()
                assert r["error"]["class"] == cls, (raw, r)
                assert desc in r["error"]["desc"], (raw, r)
            # Still answering after all that.
            assert q.cmd("query-status")["running"]

        # A 10 MB request: refused and dropped once it passes the limit.
        big = socket.socket(socket.AF_UNIX)
        big.settimeout(30)
        big.connect(path)
        big.recv(4096)
        payload = b'{"execute": "qmp_capabilities", "arguments": {"x": "' + b"a" * (10 << 20)
        try:
            big.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = b""
        try:
            while True:
                chunk = big.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except ConnectionResetError:
            pass
        big.close()
        assert b"too large" in reply or reply == b"", reply[:200]

        # Clients that leave mid-request, or before reading their reply.
        for data in [b'{"execute": "query-hotpl', b'{"execute": "qmp_capabilities"}\n'
                     b'{"execute": "query-hotpluggable-cpus"}\n', b""]:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(data)
            s.close()

        # 100 clients at once, all served.
        clients = [Qmp(path) for _ in range(100)]
        for c in clients:
            c.send_raw(json.dumps({"execute": "query-cpus-fast", "id": "many"}) + "\n")
        for c in clients:
            assert len(c.recv()["return"]) == 2
        for c in clients:
            c.close()

        assert keeper.cmd("query-status")["running"]
        assert settle(pid, before) == before
        keeper.close()
        assert vm.proc.poll() is None


def test_quit_emits_shutdown(tmp_path):
    vm, path = start(tmp_path)
    with vm, Qmp(path) as q, Qmp(path) as watcher:
        assert q.cmd("quit") == {}
        ev = watcher.wait_event("SHUTDOWN")
        assert ev["data"] == {"guest": False, "reason": "host-qmp-quit"}
        assert set(ev["timestamp"]) == {"seconds", "microseconds"}
        assert abs(ev["timestamp"]["seconds"] - time.time()) < 60
        assert vm.wait_exit() == 0
        assert not os.path.exists(path)


def test_signal_emits_shutdown(tmp_path):
    vm, path = start(tmp_path)
    with vm, Qmp(path) as q:
        vm.signal(signal.SIGTERM)
        ev = q.wait_event("SHUTDOWN")
        assert ev["data"] == {"guest": False, "reason": "host-signal"}
        assert vm.wait_exit() == 128 + signal.SIGTERM


def test_paused_start_and_cont(tmp_path):
    # -S, as QEMU: nothing runs until `cont`, so a client sees everything from the start.
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-S", "--smp", "2", "--qmp", path, "--append", "halt")
    with vm:
        wait_socket(path)
        with Qmp(path) as q:
            assert q.cmd("query-status") == {"status": "prelaunch", "singlestep": False,
                                             "running": False}
            # The boot CPUs are listed while paused, with their threads (libvirt needs it).
            cpus = q.cmd("query-cpus-fast")
            assert [c["cpu-index"] for c in cpus] == [0, 1]
            assert all(os.path.exists(f"/proc/{vm.proc.pid}/task/{c['thread-id']}")
                       for c in cpus)
            assert not vm.lines(r"CPUs online")
            assert q.cmd("cont") == {}
            q.wait_event("RESUME")
            ev = q.wait_event("SHUTDOWN", timeout=BOOT_TIMEOUT)
            assert ev["data"] == {"guest": True, "reason": "guest-shutdown"}
        assert vm.wait_exit() == 0
        assert vm.lines(r"^plugvm-guest: 2/2 CPUs online$"), vm.transcript()


def wait_lines(vm, pattern, n, timeout=BOOT_TIMEOUT):
    """Wait until `n` console lines match `pattern` (a guest that boots again says it again)."""
    vm.wait_count(pattern, n, timeout)


def half_closed_session(path, requests):
    """Send `requests` and half-close at once (a shell pipe into socat); every line the
    server sends until it closes."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(BOOT_TIMEOUT)
        s.connect(path)
        s.sendall("".join(json.dumps(r) + "\n" for r in requests).encode())
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


def test_stop_cont_hmp_and_half_close(tmp_path):
    # QEMU's stop/cont and the two HMP commands clients use, then a half-closed connection:
    # the commands sent through it are all answered (an agent one is answered later
    # by the guest) before the server closes. One VM for all.
    vm, path = start(tmp_path)
    with vm, Qmp(path) as q:
        assert q.cmd("human-monitor-command", {"command-line": "info status"}) == \
            "VM status: running\r\n"
        assert q.cmd("stop") == {}
        q.wait_event("STOP")
        assert q.cmd("query-status") == {"status": "paused", "singlestep": False,
                                         "running": False}
        assert q.cmd("human-monitor-command", {"command-line": "info status"}) == \
            "VM status: paused\r\n"
        assert q.cmd("stop") == {}  # already stopped: nothing happens
        cpus = q.cmd("human-monitor-command", {"command-line": "info cpus"})
        tids = [c["thread-id"] for c in q.cmd("query-cpus-fast")]
        assert cpus == "".join(f"{'*' if i == 0 else ' '} CPU #{i}: thread_id={t}\r\n"
                               for i, t in enumerate(tids))
        with pytest.raises(QmpError) as e:
            q.cmd("human-monitor-command", {"command-line": "info registers"})
        assert e.value.error_class == "CommandNotFound" and "info cpus" in e.value.desc
        assert q.cmd("cont") == {}
        q.wait_event("RESUME")
        assert q.cmd("query-status")["status"] == "running"
        assert not [e for e in q.events if e["event"] in ("STOP", "RESUME")]
        wait_agent(q, vm)

        lines = half_closed_session(path, [
            {"execute": "qmp_capabilities"},
            {"execute": "query-cpuhp-states", "id": "agent"},
            {"execute": "query-status", "id": 2},
            {"execute": "no-such-command", "id": 3},
            {"execute": "stop", "id": 4},
            {"execute": "cont", "id": 5},
        ])
        replies = {r.get("id"): r for r in lines[1:] if "event" not in r}
        assert set(replies) == {None, "agent", 2, 3, 4, 5}, lines
        assert any(s["name"] == "online" for s in replies["agent"]["return"]), lines
        assert replies[2]["return"]["status"] == "running"
        assert replies[3]["error"]["class"] == "CommandNotFound"
        assert [e["event"] for e in lines if "event" in e] == ["STOP", "RESUME"], lines
        assert q.cmd("query-status")["status"] == "running"

        # system_reset, as QEMU's: RESET, and the guest boots again from its entry; a
        # hot-added CPU goes (DEVICE_DELETED), the boot CPUs come back. Then once more
        # while paused: the VM is in prelaunch, as QEMU's, until `cont`.
        q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "c3", "socket-id": 0,
                             "core-id": 3, "thread-id": 0})
        vm.wait_for(r"^acpi-hotplug: slot 3: cpu 3 online \(0\)$", BOOT_TIMEOUT)
        assert q.cmd("system_reset") == {}
        assert q.wait_event("DEVICE_DELETED")["data"]["device"] == "c3"
        assert q.wait_event("RESET")["data"] == {"guest": False,
                                                  "reason": "host-qmp-system-reset"}
        wait_lines(vm, r"^plugvm-guest: 2/2 CPUs online$", 2)
        assert [c["cpu-index"] for c in q.cmd("query-cpus-fast")] == [0, 1]
        q.cmd("stop")
        q.wait_event("STOP")
        q.cmd("system_reset")
        q.wait_event("RESET")
        assert q.cmd("query-status")["status"] == "prelaunch"
        q.cmd("cont")
        wait_lines(vm, r"^plugvm-guest: 2/2 CPUs online$", 3)
        assert len(vm.lines(r"^plugvm-guest: \d+ possible CPUs")) == 3, vm.transcript()
        wait_agent(q, vm)
        q.cmd("quit")
        assert vm.wait_exit() == 0


def test_guest_poweroff_emits_shutdown(tmp_path):
    # The guest powers off by itself once its self-test is done; the client is already there.
    with paused_with_qmp(tmp_path, "--smp", "2", "--append",
                         "selftest=timer_hrtimer_sleep") as (vm, q):
        ev = q.wait_event("SHUTDOWN", timeout=BOOT_TIMEOUT)
        assert ev["data"] == {"guest": True, "reason": "guest-shutdown"}
        assert vm.wait_exit() == 0


def test_default_socket_path(tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    vm = plugvm("--append", "", env=env)
    with vm:
        m = vm.wait_for(r"^plugvm: QMP socket: (\S+)$", stream="stderr")
        path = m.group(1)
        assert path == f"{tmp_path}/plugvm-{vm.proc.pid}.qmp"
        wait_socket(path)
        with Qmp(path) as q:
            q.cmd("quit")
        assert vm.wait_exit() == 0
        assert not os.path.exists(path)


def test_unusable_socket_paths(tmp_path):
    regular = tmp_path / "file"
    regular.write_text("keep me")
    for arg, msg in [(f"unix:{regular}", "not a socket"),
                     (f"unix:{tmp_path}/no/such/dir/q.sock", "cannot listen"),
                     ("unix:/" + "a" * 120, "longer than 107"),
                     ("unix:/tmp/x,server,wait=on", "unsupported option")]:
        rc, vm = run_plugvm("--qmp", arg, "--append", "halt")
        assert rc != 0, vm.transcript()
        assert vm.lines(msg, "stderr"), vm.transcript()
    assert regular.read_text() == "keep me"


def test_stale_socket_replaced_live_one_kept(tmp_path):
    path = str(tmp_path / "qmp.sock")
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens: left over by a killed VMM
    vm, _ = start(tmp_path)
    with vm:
        rc, second = run_plugvm("--qmp", path, "--append", "halt")
        assert rc != 0 and second.lines("another process listens there", "stderr"), \
            second.transcript()
        with Qmp(path) as q:
            assert q.cmd("query-status")["running"]


def test_guest_ost_becomes_acpi_device_ost(tmp_path):
    # acpi_cphp reports _OST (source 1, status 0) for slot 0 through the hotplug block; the
    # client is there first (-S, then cont).
    with paused_with_qmp(tmp_path, "--smp", "2,maxcpus=4", "--append",
                         "selftest=acpi_cphp") as (vm, q):
        ev = q.wait_event("ACPI_DEVICE_OST", timeout=BOOT_TIMEOUT)
        assert ev["data"] == {"info": {"source": 1, "status": 0, "slot": "0",
                                       "slot-type": "CPU"}}
        assert vm.wait_exit() == 0, vm.transcript()


def test_guest_eject_parks_the_vcpu(tmp_path):
    # The guest takes its highest CPU offline and ejects its slot (acpi_cphp_eject): the
    # VMM ends that vCPU's thread, keeps its fd parked and says DEVICE_DELETED.
    # selftest.stay: the guest stays up until `quit`, so the queries after DEVICE_DELETED do
    # not race its power-off (the server then closes: seen once as a connection reset).
    with paused_with_qmp(tmp_path, "--smp", "3,maxcpus=4", "--append",
                         "selftest=acpi_cphp_eject selftest.stay") as (vm, q):
        before = {c["cpu-index"]: c["thread-id"] for c in q.cmd("query-cpus-fast")}
        ev = q.wait_event("DEVICE_DELETED", timeout=BOOT_TIMEOUT)
        assert ev["data"] == {"path": "/machine/unattached/device[2]"}
        cpus = q.cmd("query-cpus-fast")
        assert [c["qom-path"] for c in cpus] == [
            "/machine/unattached/device[0]", "/machine/unattached/device[1]"]
        slots = q.cmd("query-hotpluggable-cpus")
        assert ["qom-path" in s for s in slots] == [False, False, True, True]
        if len(before) == 3:  # seen before the eject: that thread is gone now
            assert not os.path.exists(f"/proc/{vm.proc.pid}/task/{before[2]}")
        vm.wait_for(r"^selftest: done \(all passed\), staying up$")
        q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()
        assert vm.lines(r"^selftest acpi_cphp_eject: cpu=2 slot=2 apic=2 ejected$"), \
            vm.transcript()


def test_system_powerdown_presses_the_power_button(tmp_path):
    with ready_with_qmp(tmp_path, "--smp", "2", "--append", "",
                        ready=r"^acpi-hotplug: ready") as (vm, q):
        assert q.cmd("system_powerdown") == {}
        q.wait_event("POWERDOWN")
        ev = q.wait_event("SHUTDOWN", BOOT_TIMEOUT)
        assert ev["data"] == {"guest": True, "reason": "guest-shutdown"}
        assert vm.wait_exit() == 0
        assert vm.lines(r"^acpi: power button: powering off$"), vm.transcript()


def wait_agent(q, vm, timeout=3 * BOOT_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not q.cmd("query-agent")["connected"]:
        assert time.monotonic() < deadline, vm.transcript()
        time.sleep(0.05)


def test_client_leaving_while_its_agent_requests_fail(tmp_path):
    # 2000 query-locks overflow the agent channel's 64 KiB ring, so most fail at once,
    # inside the command, while the client that sent them has already closed its socket:
    # the session outlives the command that runs on it (qmp_session.c's execute_request();
    # the run fails under ASan with a use-after-free, or in a release build with SIGSEGV,
    # if it does not).
    vm, path = start(tmp_path)
    with vm:
        with Qmp(path, timeout=3 * BOOT_TIMEOUT) as q:
            wait_agent(q, vm)
        for _ in range(3):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            assert b"QMP" in s.recv(4096)
            s.sendall(b'{"execute": "qmp_capabilities"}\n' +
                      b'{"execute": "query-locks"}\n' * 2000)
            s.close()
        with Qmp(path, timeout=3 * BOOT_TIMEOUT) as q:
            assert q.cmd("query-status")["running"], vm.transcript()
            deadline = time.monotonic() + 3 * BOOT_TIMEOUT
            while True:  # the guest still drains the requests that made it through
                r = q.execute("query-locks")
                if "return" in r:
                    break
                assert "try again" in r["error"]["desc"], r
                assert time.monotonic() < deadline, vm.transcript()
                time.sleep(0.2)
            q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()
