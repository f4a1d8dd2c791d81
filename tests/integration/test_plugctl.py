# SPDX-License-Identifier: MIT
"""plugctl, the friendly QMP client, against a real VM: every command, human and --json
output, exit statuses, and its errors."""
import json
import os
import subprocess

from qmp import wait_socket
from vm import BOOT_TIMEOUT, ROOT, plugvm

PLUGCTL = os.environ.get("PLUGCTL_BIN", os.path.join(ROOT, "build", "plugctl"))


def ctl(path, *args, env=None):
    p = subprocess.run([PLUGCTL, "-s", path, "-t", "120", *args], capture_output=True,
                       text=True, timeout=300, env=env)
    return p.returncode, p.stdout, p.stderr


def present(path):
    rc, out, err = ctl(path, "--json", "cpus")
    assert rc == 0, err
    return sorted(s["props"]["core-id"] for s in json.loads(out) if "qom-path" in s)


def test_plugctl_commands(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "1,maxcpus=4", "--qmp", path, "--append", "")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        rc, out, _ = ctl(path, "cpus")
        assert rc == 0 and "1 of 4 CPUs present" in out, out
        assert out.splitlines()[1].split()[:5] == ["0", "0", "0", "0", "present"], out
        rc, out, _ = ctl(path, "status")
        assert (rc, out) == (0, "running\n")

        rc, out, err = ctl(path, "cpu", "add")
        assert rc == 0 and out.startswith("cpu 1 added: online in the guest"), (out, err)
        rc, out, err = ctl(path, "cpu", "add", "3")
        assert rc == 0 and out.startswith("cpu 3 added"), (out, err)
        assert present(path) == [0, 1, 3]
        rc, out, err = ctl(path, "cpu", "del", "1")
        assert rc == 0 and out.startswith("cpu 1 removed"), (out, err)
        assert present(path) == [0, 3]
        rc, out, err = ctl(path, "cpu", "set", "4")
        assert rc == 0 and out.endswith("4 CPUs present\n"), (out, err)
        assert present(path) == [0, 1, 2, 3]
        rc, out, err = ctl(path, "cpu", "set", "2")
        assert rc == 0, err
        assert present(path) == [0, 1]
        assert len(vm.lines(r"^acpi-hotplug: slot \d: cpu \d online \(0\)$")) == 4

        rc, out, _ = ctl(path, "qmp", '{"execute": "query-status"}')
        assert rc == 0 and json.loads(out)["return"]["running"] is True
        rc, out, _ = ctl(path, "--json", "cpu", "add")
        assert rc == 0 and json.loads(out)["event"] == "ACPI_DEVICE_OST"

        # The VM or the guest says no: status 1, the reason on stderr.
        for args, msg in [(("cpu", "del", "0"), "Boot CPU is unpluggable"),
                          (("cpu", "add", "9"), "no slot 9"),
                          (("cpu", "add", "1"), "slot 1 is taken"),
                          (("cpu", "del", "3"), "no CPU in slot 3"),
                          (("cpu", "set", "7"), "cannot have 7 CPUs"),
                          (("qmp", '{"execute": "nope"}'), "")]:
            rc, out, err = ctl(path, *args)
            assert rc == 1, (args, rc, out, err)
            assert msg in err, (args, err)
        # Bad usage: status 2.
        for args in [("cpu",), ("cpu", "add", "x"), ("frobnicate",), ("qmp", "not json"),
                     ("cpus", "extra"), ("cpu", "del")]:
            rc, _, err = ctl(path, *args)
            assert rc == 2 and err.startswith("plugctl: "), (args, rc, err)

        rc, out, _ = ctl(path, "quit")
        assert rc == 0
        assert vm.wait_exit() == 0


def test_plugctl_finds_the_default_socket(tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path), PLUGVM_QMP="")
    vm = plugvm("--append", "", env=env)
    with vm:
        vm.wait_for(r"^plugvm: QMP socket: ", stream="stderr")
        p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60,
                           env=env)
        assert (p.returncode, p.stdout) == (0, "running\n"), p.stderr
        # Two VMs there: plugctl will not guess.
        (tmp_path / "plugvm-1.qmp").write_text("")
        p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60,
                           env=env)
        assert p.returncode == 2 and "several VMs" in p.stderr, p.stderr


def test_plugctl_without_a_vm(tmp_path):
    p = subprocess.run([PLUGCTL, "-s", str(tmp_path / "none.sock"), "cpus"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "cannot connect" in p.stderr, p.stderr
    regular = tmp_path / "file.sock"
    regular.write_text("")
    p = subprocess.run([PLUGCTL, "-s", str(regular), "status"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    p = subprocess.run([PLUGCTL, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "cpu add [SLOT]" in p.stdout
    p = subprocess.run([PLUGCTL], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2


def test_plugctl_cpuhp_commands(tmp_path):
    # states, cpuhp, target, fail, timers, sched: the guest agent's commands.
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "2", "--qmp", path, "--append", "")
    with vm:
        wait_socket(path)
        import time
        deadline = time.monotonic() + BOOT_TIMEOUT
        while True:
            rc, out, _ = ctl(path, "--json", "qmp", '{"execute": "query-agent"}')
            if json.loads(out)["return"]["connected"]:
                break
            assert time.monotonic() < deadline, vm.transcript()
            time.sleep(0.1)
        rc, out, err = ctl(path, "states")
        lines = out.splitlines()
        assert rc == 0 and lines[0].split() == ["id", "name", "section", "allows"], out
        assert lines[1].split()[:3] == ["0", "offline", "prepare"], out
        assert any(l.split()[1:3] == ["sched:active", "online"] for l in lines[1:]), out
        rc, out, err = ctl(path, "target", "1", "timers:online")
        assert rc == 0, err
        assert out.splitlines()[-1].startswith("cpu 1: online -> timers:online in "), out
        assert "down sched:active" in out.replace("  ", " ").replace("  ", " "), out
        rc, out, _ = ctl(path, "cpuhp")
        row = [l.split() for l in out.splitlines() if l.split()[:1] == ["1"]][0]
        assert row[:4] == ["1", "yes", "timers:online", "timers:online"], out
        rc, out, err = ctl(path, "fail", "1", "sched:active")
        assert rc == 0 and "next transition fails at sched:active" in out, (out, err)
        rc, out, err = ctl(path, "target", "1", "online")
        assert rc == 1 and "failed at sched:active" in out, (out, err)
        assert "rolled back to timers:online" in out, out
        rc, out, err = ctl(path, "target", "1", "online")
        assert rc == 0, (out, err)
        rc, out, err = ctl(path, "--json", "target", "1", "0")
        assert rc == 0 and json.loads(out)["state"] == "offline", out
        rc, out, err = ctl(path, "timers")
        assert rc == 0 and out.startswith("cpu 0: ticks ") and "cpu 1: " in out, out
        assert "(lateness in ticks of " in out, out
        rc, out, err = ctl(path, "sched", "0")
        assert rc == 0 and out.splitlines()[1].split()[0] == "0", out
        # Refusals and bad usage.
        for args, rc_want, text in [(("target", "1", "nonsense"), 1, "not a cpuhp state"),
                                    (("target", "0", "offline"), 1, "Invalid argument"),
                                    (("target", "1"), 2, "target CPU STATE"),
                                    (("fail", "x", "1"), 2, "not a number"),
                                    (("timers", "1", "2"), 2, "timers [CPU]")]:
            rc, out, err = ctl(path, *args)
            assert rc == rc_want and text in err, (args, rc, out, err)
        rc, _, _ = ctl(path, "quit")
        assert rc == 0 and vm.wait_exit() == 0
