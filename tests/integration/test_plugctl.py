# SPDX-License-Identifier: MIT
"""plugctl, the friendly QMP client, against a real VM: every command, human and --json
output, exit statuses, and its errors."""
import json
import os
import socket
import subprocess
import threading

from qmp import wait_socket
from vm import BOOT_TIMEOUT, GUEST, ROOT, plugvm

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

        # KVM's counters per vCPU (query-stats): one row per present CPU, each has exited.
        rc, out, err = ctl(path, "stats")
        lines = out.splitlines()
        assert rc == 0 and lines[0].split()[:3] == ["vcpu", "exits", "io_exits"], (out, err)
        assert len(lines) == 1 + len(present(path)), out
        assert all(int(line.split()[1]) > 0 for line in lines[1:]), out
        rc, out, err = ctl(path, "--json", "stats", "exits", "halt_exits")
        res = json.loads(out)
        assert rc == 0 and len(res) == len(present(path)), (out, err)
        for r in res:
            assert r["provider"] == "kvm" and r["qom-path"].startswith("/machine/"), out
            assert sorted(s["name"] for s in r["stats"]) == ["exits", "halt_exits"], out
        rc, _, err = ctl(path, "stats", *["exits"] * 17)
        assert rc == 2 and "at most 16" in err, err

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
        assert (rc, out) == (0, "the VM is stopping\n")
        assert vm.wait_exit() == 0


def test_plugctl_finds_the_default_socket(tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path), PLUGVM_QMP="")
    vm = plugvm("--append", "", env=env)
    with vm:
        vm.wait_for(r"^plugvm: QMP socket: ", stream="stderr")
        p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60,
                           env=env)
        assert (p.returncode, p.stdout) == (0, "running\n"), p.stderr
        # Sockets of killed VMs (nobody listens) and other files beside it are skipped;
        # the live VM is found.
        for i in range(1, 40):
            stale = socket.socket(socket.AF_UNIX)
            stale.bind(str(tmp_path / f"plugvm-{i}.qmp"))
            stale.close()
        (tmp_path / "plugvm-x.qmp").write_text("")
        p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60,
                           env=env)
        assert (p.returncode, p.stdout) == (0, "running\n"), p.stderr
        # Two live VMs there: plugctl will not guess.
        other = socket.socket(socket.AF_UNIX)
        other.bind(str(tmp_path / "plugvm-40.qmp"))
        other.listen()
        p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60,
                           env=env)
        other.close()
        assert p.returncode == 2 and "several VMs" in p.stderr, p.stderr
        rc, out, _ = ctl(path_of(vm), "quit")
        assert rc == 0 and vm.wait_exit() == 0
    # Only stale sockets left: no VM, said so (status 3, not a usage error).
    p = subprocess.run([PLUGCTL, "status"], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 3 and \
        f"no running plugvm found in {tmp_path} (41 plugvm-*.qmp files" in p.stderr, p.stderr


def path_of(vm):
    return vm.lines(r"^plugvm: QMP socket: (\S+)$", "stderr")[0].group(1)


def test_plugctl_without_a_vm(tmp_path):
    p = subprocess.run([PLUGCTL, "-s", str(tmp_path / "none.sock"), "cpus"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 3 and "cannot connect" in p.stderr, p.stderr
    regular = tmp_path / "file.sock"
    regular.write_text("")
    p = subprocess.run([PLUGCTL, "-s", str(regular), "status"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 3, p.stderr
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
                                    (("target", "0", "offline"), 1,
                                     "plugctl: cpuhp-set-target: cpu 0 is the boot CPU"),
                                    (("target", "1", "sched:starting"), 1,
                                     "not one a CPU can rest in"),
                                    (("target", "1"), 2, "target CPU STATE"),
                                    (("fail", "x", "1"), 2, "not a number"),
                                    (("timers", "1", "2"), 2, "timers [CPU]")]:
            rc, out, err = ctl(path, *args)
            assert rc == rc_want and text in err, (args, rc, out, err)
        rc, _, _ = ctl(path, "quit")
        assert rc == 0 and vm.wait_exit() == 0


# Names as a hostile guest could make them, as a server might pass them on: a terminal title
# escape, a C1 CSI, a bidi override, bytes that are not UTF-8, DEL. (plugvm itself cleans
# guest strings; plugctl must not trust the server either.)
HOSTILE = [b"esc\x1b]0;pwned\x07", b"c1\xc2\x9b31mred", b"rtl\xe2\x80\xaetxt", b"bad\xff\xfe",
           b"del\x7f", "caf\u00e9".encode()]


def hostile_server(path):
    """A QMP server on `path` answering plugctl's queries with HOSTILE strings."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def reply(req):
        name = req["execute"]
        if name == "qmp_capabilities":
            ret = b"{}"
        elif name == "query-cpuhp-states":
            ret = b"[" + b",".join(
                b'{"id":%d,"name":"%s","section":"%s","can-rest":true,"can-fail":false}'
                % (i, n, n) for i, n in enumerate(HOSTILE)) + b"]"
        elif name == "query-cpuhp":
            ret = b'[{"cpu":0,"present":true,"state":"%s","target":"%s","fail":"%s",' \
                  b'"failed-state":"%s","last-error":-5}]' % tuple(HOSTILE[:4])
        elif name == "cpuhp-set-target":
            ret = b'{"success":true,"from":"%s","state":"%s","ns":1000,"states":' \
                  b'[{"direction":"%s","state":"%s","ns":10,"result":0}]}' % tuple(HOSTILE[:4])
        elif name == "query-status":
            ret = b'{"status":"%s"}' % HOSTILE[0]
        else:
            return b'{"error":{"class":"GenericError","desc":"no %s"},"id":%s}' % (
                HOSTILE[1], json.dumps(req["id"]).encode())
        return b'{"return":%s,"id":%s}' % (ret, json.dumps(req.get("id")).encode())

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            with c:
                c.sendall(b'{"QMP":{"version":{"qemu":{"micro":0,"minor":2,"major":0},'
                          b'"package":"fake"},"capabilities":[]}}\r\n')
                buf = b""
                while True:
                    data = c.recv(65536)
                    if not data:
                        break
                    buf += data
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        c.sendall(reply(json.loads(line)) + b"\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_plugctl_keeps_hostile_strings_off_the_terminal(tmp_path):
    # The guest's state names (through the server) never reach the user's terminal raw:
    # plugctl prints escape sequences and other controls cleaned.
    path = str(tmp_path / "fake.qmp")
    srv = hostile_server(path)
    try:
        for args in [["states"], ["cpuhp"], ["target", "0", "x"], ["status"],
                     ["qmp", '{"execute": "nonsense"}'],
                     ["--json", "states"], ["--json", "cpuhp"], ["--json", "status"]]:
            p = subprocess.run([PLUGCTL, "-s", path, "-t", "10", *args], capture_output=True,
                               timeout=60)
            for out in (p.stdout, p.stderr):
                text = out.decode("utf-8")  # strict: valid UTF-8 only
                assert not [ch for ch in text if (ord(ch) < 0x20 and ch not in "\n\t")
                            or 0x7f <= ord(ch) <= 0x9f or 0x2028 <= ord(ch) <= 0x202e], \
                    (args, text)
            if args[0] == "--json":
                v = json.loads(p.stdout)  # still JSON, with the code points kept
                assert p.returncode == 0, p.stderr
                if args[1] == "states":
                    assert [s["name"] for s in v] == [
                        "esc\x1b]0;pwned\x07", "c1\x9b31mred", "rtl\u202etxt",
                        "bad\ufffd\ufffd", "del\x7f", "caf\u00e9"], v
            elif args[0] == "states":
                assert p.returncode == 0, p.stderr
                assert b"esc\\x1b]0;pwned\\x07" in p.stdout, p.stdout
                assert b"bad\\xff\\xfe" in p.stdout and "café".encode() in p.stdout
    finally:
        srv.close()


def _field(out, name):
    """A `Name:   value` field of virsh's dominfo/vcpuinfo layout."""
    for line in out.splitlines():
        if line.startswith(name + ":"):
            return line[len(name) + 1:].strip()
    raise AssertionError(f"no {name} in {out!r}")


def _domain(tmp_path, name):
    """A small domain document naming the VM (plugvm's name and UUID come from one)."""
    xml = tmp_path / f"{name}.xml"
    xml.write_text(f"""<domain type='kvm'>
  <name>{name}</name>
  <uuid>4f6bd9d5-0a6a-4bd8-9d0e-0c5b6b6c2a11</uuid>
  <memory unit='MiB'>64</memory>
  <vcpu placement='static'>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{GUEST}</kernel>
  </os>
  <features><acpi/></features>
  <devices><serial type='stdio'><target port='0'/></serial></devices>
</domain>
""")
    return str(xml)


def test_plugctl_takes_virshs_words_and_flags_for_vcpus(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "1,maxcpus=4", "--qmp", path, "--append", "")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        rc, out, err = ctl(path, "setvcpus", "3", "--live")
        assert rc == 0 and out.endswith("3 CPUs present\n"), (out, err)
        assert present(path) == [0, 1, 2]
        rc, out, err = ctl(path, "setvcpus", "--current", "2")
        assert rc == 0 and present(path) == [0, 1], (out, err)
        rc, out, err = ctl(path, "setvcpus", "3", "--live", "--hotpluggable")
        assert rc == 0 and present(path) == [0, 1, 2], (out, err)
        assert ctl(path, "vcpucount")[1].split() == ["maximum", "live", "4",
                                                     "current", "live", "3"]
        for flags, want in [(["--maximum"], "4"), (["--maximum", "--live"], "4"),
                            (["--active"], "3"), (["--live"], "3"), (["--current"], "3"),
                            (["--active", "--current"], "3")]:
            rc, out, err = ctl(path, "vcpucount", *flags)
            assert (rc, out) == (0, want + "\n"), (flags, out, err)

        # What a running transient domain cannot do: refused in libvirt's words, status 1.
        for args, msg in [
                (("setvcpus", "2", "--config"), "cannot change persistent config of a "
                                                "transient domain"),
                (("setvcpus", "2", "--live", "--config"), "transient domain"),
                (("setvcpus", "4", "--maximum"), "maximum vcpu count of a live domain can't "
                                                 "be modified"),
                (("setvcpus", "2", "--guest"), "guest agent"),
                (("vcpucount", "--config"), "transient domain"),
                (("vcpupin", "0", "0", "--config"), "transient domain")]:
            rc, out, err = ctl(path, *args)
            assert rc == 1 and msg in err and err.startswith("plugctl: error: "), (args, err)
        # virsh's usage errors: status 2, one line.
        for args, msg in [(("setvcpus", "2", "--current", "--live"),
                           "Options --current and --live are mutually exclusive"),
                          (("vcpucount", "--active", "--maximum"),
                           "Options --active and --maximum are mutually exclusive"),
                          (("setvcpus", "2", "--frob"),
                           "command 'setvcpus' doesn't support option --frob"),
                          (("vcpucount", "--hotpluggable"), "doesn't support option"),
                          (("setvcpus", "--live"), "requires <count>"),
                          (("setvcpus", "2", "3"), "unexpected data '3'"),
                          (("shutdown", "--mode", "agent"), "--mode acpi"),
                          (("domstate", "--frob"), "doesn't support option --frob")]:
            rc, out, err = ctl(path, *args)
            assert rc == 2 and msg in err and err.count("\n") == 1, (args, err)
        assert present(path) == [0, 1, 2]

        # vcpuinfo and vcpupin on the vCPU threads themselves.
        rc, out, err = ctl(path, "vcpuinfo")
        blocks = [b for b in out.split("\n\n") if b.strip()]
        assert rc == 0 and len(blocks) == 3, (out, err)
        assert [_field(b, "VCPU") for b in blocks] == ["0", "1", "2"], out
        ncpu = os.sysconf("SC_NPROCESSORS_CONF")  # virsh's map: every configured CPU
        for b in blocks:
            assert _field(b, "State") == "running" and _field(b, "CPU time").endswith("s")
            assert 0 <= int(_field(b, "CPU")) < ncpu
            assert len(_field(b, "CPU Affinity")) == ncpu, b
        rc, out, err = ctl(path, "vcpupin", "1", "0")
        assert (rc, out) == (0, ""), err
        tids = {c["cpu-index"]: c["thread-id"] for c in
                json.loads(ctl(path, "qmp", '{"execute": "query-cpus-fast"}')[1])["return"]}
        assert os.sched_getaffinity(tids[1]) == {0}
        rc, out, err = ctl(path, "vcpupin")
        rows = out.splitlines()
        assert rc == 0 and rows[0].split() == ["VCPU", "CPU", "Affinity"], out
        assert rows[3].split() == ["1", "0"], out
        rc, out, err = ctl(path, "vcpupin", "1")
        assert rc == 0 and out.splitlines()[2].split() == ["1", "0"], out
        assert _field(ctl(path, "vcpuinfo")[1].split("\n\n")[1], "CPU Affinity") == \
            "y" + "-" * (ncpu - 1)
        # "r": every host CPU again (as the kernel allows: at least vCPU 0's, never pinned).
        rc, out, err = ctl(path, "vcpupin", "1", "r")
        assert rc == 0 and os.sched_getaffinity(tids[1]) >= os.sched_getaffinity(tids[0]), err
        for bad in ["x", f"{ncpu}", "1-0", "0,^0"]:
            rc, out, err = ctl(path, "vcpupin", "1", bad)
            assert rc == 2 and "plugctl: error: Physical CPU" in err, (bad, err)
        rc, out, err = ctl(path, "vcpupin", "3", "0")
        assert rc == 1 and "out of range" in err, err
        ctl(path, "quit")
        vm.wait_exit(BOOT_TIMEOUT)


def test_plugctl_lifecycle_verbs_do_what_virsh_does(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--domain", _domain(tmp_path, "life"), "--smp", "2", "--qmp", path,
                "--append", "")
    with vm:
        vm.wait_for(r"^plugvm-guest: boot done", BOOT_TIMEOUT)
        wait_socket(path)
        rc, out, err = ctl(path, "dominfo")
        assert rc == 0, err
        assert _field(out, "Name") == "life" and _field(out, "OS Type") == "hvm"
        assert _field(out, "UUID") == "4f6bd9d5-0a6a-4bd8-9d0e-0c5b6b6c2a11"
        assert _field(out, "State") == "running" and _field(out, "CPU(s)") == "2"
        assert _field(out, "Max memory") == "65536 KiB" == _field(out, "Used memory")
        assert _field(out, "Persistent") == "no" and _field(out, "CPU time").endswith("s")
        assert ctl(path, "domstate") == (0, "running\n\n", "")
        assert ctl(path, "domstate", "--reason")[1] == "running (unknown)\n\n"

        assert ctl(path, "suspend") == (0, "Domain 'life' suspended\n\n", "")
        assert ctl(path, "domstate", "--reason")[1] == "paused (user)\n\n"
        assert _field(ctl(path, "dominfo")[1], "State") == "paused"
        assert ctl(path, "resume") == (0, "Domain 'life' resumed\n\n", "")
        assert ctl(path, "domstate")[1] == "running\n\n"

        # reboot: the machine resets and the guest boots again.
        booted = len(vm.lines(r"^plugvm-guest: 2/2 CPUs online"))
        assert ctl(path, "reboot") == (0, "Domain 'life' is being rebooted\n\n", "")
        vm.wait_count(r"^plugvm-guest: 2/2 CPUs online", booted + 1, BOOT_TIMEOUT)

        # shutdown: the power button, once the rebooted guest's ACPI driver listens; the guest
        # powers off and plugvm ends with status 0.
        vm.wait_count(r"^acpi-hotplug: ready", 2, BOOT_TIMEOUT)
        assert ctl(path, "shutdown", "--mode", "acpi") == \
            (0, "Domain 'life' is being shutdown\n\n", "")
        assert vm.wait_exit(BOOT_TIMEOUT) == 0, vm.transcript()


def test_plugctl_destroy_returns_once_the_vm_is_gone(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--domain", _domain(tmp_path, "gone"), "--qmp", path, "--append", "")
    with vm:
        wait_socket(path)
        rc, out, err = ctl(path, "destroy", "--graceful")
        assert (rc, out) == (0, "Domain 'gone' destroyed\n\n"), err
        # Gone already: its socket no longer answers.
        rc, _, err = ctl(path, "domstate")
        assert rc == 3, err
        assert vm.wait_exit(BOOT_TIMEOUT) == 0
