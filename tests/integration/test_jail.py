# SPDX-License-Identifier: MIT
"""--jail DIR (docs/security.md, "The jail"): the VMM runs as pid 1 of its own PID namespace,
in new mount, IPC, UTS and network namespaces with DIR as its root, without capabilities,
with a bounded descriptor table and unable to start a process; QMP (through the socket's
host path DIR/plugvm.qmp), the console, a hot-add and a shutdown still work.

With --sandbox off, so that the jail is tested alone, PLUGVM_JAIL_TEST=probe (a hook that
exists only for these tests) makes the main thread, once jailed, try what a hijacked thread
would: open host files, list /proc, list network interfaces, fork, execve; each result is a
"jail probe: WHAT: refused (...)" or "... allowed" line on stderr. With the sandbox on as
well, the filters still hold: every thread filtered, a forbidden call still ends the VM.
"""
import os
import pwd
import signal

import pytest

from qmp import Qmp, wait_socket
from test_sandbox import REPORT, allowed, read_filters, threads
from vm import BOOT_TIMEOUT, GUEST, ROOT, plugvm, run_plugvm

TIMEOUT = 3 * BOOT_TIMEOUT
PROBES = ["open /etc/passwd", "open /proc/1/environ", "open /dev/kvm", "list /proc",
          "network interfaces", "fork", "execve /bin/sh"]
NAMESPACES = ["pid", "mnt", "ipc", "uts", "net"]
CLONE_THREAD, CLONE_VM = 0x10000, 0x100


def jail_dir(tmp_path, owner=None):
    d = tmp_path / "jail"
    d.mkdir(mode=0o700)
    if owner is not None:
        os.chown(d, owner, -1)
    return str(d)


def vmm_pid(vm):
    """The jailed VMM: the only child of the plugvm that waits for it."""
    with open(f"/proc/{vm.proc.pid}/task/{vm.proc.pid}/children") as f:
        kids = [int(p) for p in f.read().split()]
    assert len(kids) == 1, kids
    return kids[0]


def status_of(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            out[key] = val.strip()
    return out


def limit(pid, name):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith(name):
                return line[len(name):].split()[:2]
    raise AssertionError(name)


def hot_add(q, vm, core):
    q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": f"cpu{core}", "socket-id": 0,
                         "core-id": core, "thread-id": 0})
    ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
    assert ev["data"]["info"]["status"] == 0, ev
    vm.wait_for(rf"^acpi-hotplug: slot {core}: cpu {core} online \(0\)$", TIMEOUT)


@pytest.mark.parametrize("user", [None, "nobody"])
def test_a_jailed_vmm_reaches_nothing_of_the_host_and_still_works(tmp_path, user):
    root = jail_dir(tmp_path)
    path = os.path.join(root, "plugvm.qmp")
    runas = ["--runas", user] if user else []
    env = dict(os.environ, PLUGVM_JAIL_TEST="probe")
    vm = plugvm("-v", "--sandbox", "off", "--smp", "1,maxcpus=2", "--jail", root, *runas,
                env=env)
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        assert vm.lines(rf"^plugvm: QMP socket: {path}$", stream="stderr"), vm.transcript()
        # What the hijacked thread tried: each refused (interfaces: none, or lo down).
        for what in PROBES:
            got = vm.lines(rf"jail probe: {what}: (\w+)", stream="stderr")
            assert [m.group(1) for m in got] == ["refused"], (what, vm.transcript())
        uid = pwd.getpwnam(user).pw_uid if user else 0
        assert vm.lines(rf"jail probe: pid 1, uid {uid}$", stream="stderr"), vm.transcript()
        # Seen from the host: other namespaces, no capability, bounded limits.
        pid = vmm_pid(vm)
        for ns in NAMESPACES:
            assert os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"), ns
        st = status_of(pid)
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]:
            assert int(st[cap], 16) == 0, (cap, st[cap])
        assert st["NoNewPrivs"] == "1"
        assert st["Uid"].split() == [str(uid)] * 4
        assert limit(pid, "Max core file size") == ["0", "0"]
        soft, hard = limit(pid, "Max open files")
        # Its descriptors now, 2 * 256 QMP clients + 1, 7 of the VMM's, 2 per vCPU at most.
        assert soft == hard and int(soft) <= len(os.listdir(f"/proc/{pid}/fd")) + 513 + 7 + 4
        # The console, QMP, a hot-add and a shutdown still work.
        assert vm.lines(r"^acpi-hotplug: ready"), vm.transcript()
        with Qmp(path) as q:
            assert q.cmd("query-status")["status"] == "running"
            hot_add(q, vm, 1)
            assert q.cmd("system_powerdown") == {}
            q.wait_event("SHUTDOWN", TIMEOUT)
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
    # The socket went with the VM (as nobody, the waiting parent removed it).
    assert os.listdir(root) == [], os.listdir(root)


def test_sigterm_ends_a_jailed_vm_that_is_pid_1(tmp_path):
    root = jail_dir(tmp_path)
    vm = plugvm("--sandbox", "off", "--jail", root)
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(os.path.join(root, "plugvm.qmp"))
        vm.signal(signal.SIGTERM)
        assert vm.wait_exit(TIMEOUT) == 128 + signal.SIGTERM, vm.transcript()
    assert vm.lines(r"terminating on signal 15", stream="stderr"), vm.transcript()
    assert os.listdir(root) == []


def test_a_bad_jail_dir_is_refused_with_one_line(tmp_path):
    d = tmp_path / "d"
    cases = [(str(tmp_path / "missing"), [], "No such file or directory"),
             (str(tmp_path / "file"), [], "not a directory"),
             (str(d), [], "not empty"),
             (str(tmp_path / "open"), [], "writable by group or others"),
             (str(tmp_path / "other"), [], "neither root nor the --runas user"),
             (str(tmp_path / "ok"), ["--qmp", str(tmp_path / "q")],
              "the socket must be a name directly in it")]
    (tmp_path / "file").write_text("")
    d.mkdir(mode=0o700)
    (d / "x").write_text("")
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o777)
    (tmp_path / "other").mkdir(mode=0o700)
    os.chown(tmp_path / "other", 1234, 1234)
    (tmp_path / "ok").mkdir(mode=0o700)
    for root, extra, why in cases:
        rc, vm = run_plugvm("--jail", root, *extra)
        assert rc == 2, (root, vm.transcript())
        assert len(vm.stderr) == 1 and why in vm.stderr[0], (root, vm.stderr)
    # The --runas user's own directory is a jail root for it.
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chown(tmp_path / "other", nobody, -1)
    rc, vm = run_plugvm("--jail", str(tmp_path / "other"), "--runas", "nobody", "--append",
                        "halt", timeout=TIMEOUT)
    assert rc == 0, vm.transcript()


def test_the_sandbox_still_holds_inside_the_jail(tmp_path):
    # Sandbox on and jail: every thread filtered; the filters read back (pid 1 is the
    # VMM itself inside its namespace) refuse new processes, files and other pids; a
    # hot-add runs under them.
    root = jail_dir(tmp_path)
    path = os.path.join(root, "plugvm.qmp")
    vm = plugvm("-v", "--smp", "1,maxcpus=2", "--jail", root, "--runas", "nobody")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        pid = vmm_pid(vm)
        with Qmp(path) as q:
            hot_add(q, vm, 1)
            seen = threads(pid)
            assert sorted(n for n, _, _ in seen.values()) == \
                ["console", "plugvm", "vcpu0", "vcpu1"], seen
            for tid, (name, mode, _) in seen.items():
                assert mode == "2", (tid, name, mode)
                progs = read_filters(tid)
                for call in [("fork",), ("vfork",), ("clone", 0x11, 0), ("execve", 0x1000),
                             ("openat", -100, 0x1000, 0), ("kill", 1, 9), ("tgkill", 2, 2, 9),
                             ("unshare", 0x20000), ("setns", 3, 0), ("mount", 0, 0, 0, 0)]:
                    assert not allowed(progs, *call), (name, call)
                assert allowed(progs, "write", 2, 0x1000, 8), name
                if name in ("plugvm", "vcpu0", "vcpu1"):
                    assert allowed(progs, "tgkill", 1, tid, 10), name
                if name == "plugvm":
                    assert allowed(progs, "clone", CLONE_THREAD | CLONE_VM, 0), name
            q.cmd("quit")
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
    assert os.listdir(root) == []


def test_a_forbidden_call_in_the_jail_still_ends_the_vm(tmp_path):
    env = dict(os.environ, PLUGVM_SANDBOX_TEST="vcpu")
    rc, vm = run_plugvm("--qmp", "none", "--append", "halt", "--jail", jail_dir(tmp_path),
                        env=env, timeout=TIMEOUT)
    assert rc == 8, vm.transcript()
    assert REPORT in vm.stderr, vm.transcript()


def host_tids(pid):
    """{tid inside the jail's PID namespace: host tid} of every thread of pid."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        host, inner = status_of(f"{pid}/task/{t}")["NSpid"].split()
        out[int(inner)] = int(host)
    return out


def test_rt_settings_still_apply_without_capabilities(tmp_path):
    # The rt example (<vcpusched fifo priority 1>, <memoryBacking><locked/>) jailed as
    # root: CAP_SYS_NICE and CAP_IPC_LOCK are gone, RLIMIT_RTPRIO and RLIMIT_MEMLOCK give
    # the same where the host lets plugvm raise them (CAP_SYS_RESOURCE), else a warning
    # says so and the VM runs. query-cpus-fast's thread ids are the jail's namespace's.
    if len(os.sched_getaffinity(0)) < 2:
        pytest.fail("this test needs 2 host CPUs (the example pins to CPUs 0 and 1)")
    can_raise = int(status_of("self")["CapEff"], 16) & (1 << 24)  # CAP_SYS_RESOURCE
    root = jail_dir(tmp_path)
    path = os.path.join(root, "plugvm.qmp")
    with plugvm("--domain", os.path.join(ROOT, "configs/libvirt/plugvm-rt.xml"),
                "--kernel", GUEST, "--jail", root, "--qmp", path) as vm:
        vm.wait_for(r"^plugvm-guest: 2/2 CPUs online$", timeout=BOOT_TIMEOUT)
        wait_socket(path)
        pid = vmm_pid(vm)
        tids = host_tids(pid)
        with Qmp(path) as q:
            vcpus = [c["thread-id"] for c in q.cmd("query-cpus-fast")]
            assert len(vcpus) == 2
            for tid in vcpus:
                want = (os.SCHED_FIFO, 1) if can_raise else (os.SCHED_OTHER, 0)
                assert (os.sched_getscheduler(tids[tid]),
                        os.sched_getparam(tids[tid]).sched_priority) == want, tid
            st = status_of(pid)
            assert int(st["CapEff"], 16) == 0
            assert int(st["VmLck"].split()[0]) * 1024 >= 64 << 20, st["VmLck"]  # guest RAM
            q.cmd("system_powerdown")
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()
    if can_raise:
        assert not vm.lines(r"vcpusched|vcpupin|mlockall|RLIMIT", stream="stderr"), \
            vm.transcript()
    else:
        assert vm.lines(r"^plugvm: warning: --jail: RLIMIT_RTPRIO 1 for <vcpusched>: "
                        r"Operation not permitted$", stream="stderr"), vm.transcript()
        assert vm.lines(r"^plugvm: warning: --jail: RLIMIT_MEMLOCK unlimited for <locked/>: "
                        r"Operation not permitted: guest RAM stays locked",
                        stream="stderr"), vm.transcript()
