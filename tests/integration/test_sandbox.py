# SPDX-License-Identifier: MIT
"""The VMM's least privilege (docs/security.md): every thread of a running VM under its
seccomp filter (`Seccomp: 2` in /proc), hot-add after the filters are in, --runas, a
forbidden system call from a vCPU thread ending the VM with the report that names the
thread kind and the call, and --sandbox off saying so.

The forbidden call is provoked through PLUGVM_SANDBOX_TEST=KIND[:ACTION], a hook that
exists only for these tests: the thread of that kind makes one call right after entering its
sandbox, getppid() or what a hijacked thread would (signal or re-schedule another process,
unlink a path, open a file, write to an fd it does not own). The filters of a running VM
are also read back (PTRACE_SECCOMP_GET_FILTER, as root) and run on made-up system calls
aimed outside the VM. Sanitizer builds run without filters (their runtimes need calls no
list allows): `make check-san` leaves this file out.
"""
import ctypes
import glob
import os
import pwd
import struct

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, plugvm, run_plugvm

TIMEOUT = 3 * BOOT_TIMEOUT
REPORT = ("plugvm: sandbox: the vcpu thread made a forbidden system call: getppid (110); "
          "ending the VM")


PF_USER_WORKER = 0x4000  # include/linux/sched.h


def threads(pid):
    """{tid: (name, seccomp mode, uid line)} of every thread of pid that runs the VMM's
    code. KVM's own worker (kvm-nx-lpage-recovery) shows in the thread group on recent
    kernels but is a kernel task that never runs user code: it is left out."""
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        with open(f"{task}/stat") as f:
            flags = int(f.read().rsplit(")", 1)[1].split()[6])
        if flags & PF_USER_WORKER:
            continue
        fields = {}
        with open(f"{task}/status") as f:
            for line in f:
                key, _, val = line.partition(":")
                fields[key] = val.strip()
        out[int(os.path.basename(task))] = (fields["Name"], fields["Seccomp"], fields["Uid"])
    return out


def test_every_thread_is_filtered_as_an_unprivileged_user_and_hot_add_works(tmp_path):
    # Every thread kind: main, console, chaos-irq (irq delays on, the rest off) and vCPUs,
    # one of them hot-added after the filters were in. As nobody (--runas).
    nobody = pwd.getpwnam("nobody")
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-v", "--smp", "1,maxcpus=2", "--qmp", path, "--runas", "nobody",
                "--chaos=seed=1,stall=off,start=off,irq=1%:1ms")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "cpu1", "socket-id": 0,
                                 "core-id": 1, "thread-id": 0})
            ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
            assert ev["data"]["info"]["status"] == 0, ev
            seen = threads(vm.proc.pid)
            names = sorted(name for name, _, _ in seen.values())
            assert names == ["chaos-irq", "console", "plugvm", "vcpu0", "vcpu1"], seen
            for tid, (name, mode, uid) in seen.items():
                assert mode == "2", f"thread {tid} ({name}) has Seccomp: {mode}"
                assert uid.split() == [str(nobody.pw_uid)] * 4, (name, uid)
            q.cmd("quit")
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
    assert vm.lines(r"running as user 'nobody'", stream="stderr"), vm.transcript()


def test_forbidden_syscall_from_a_vcpu_thread_ends_the_vm():
    env = dict(os.environ, PLUGVM_SANDBOX_TEST="vcpu")
    rc, vm = run_plugvm("--qmp", "none", "--append", "halt", env=env, timeout=TIMEOUT)
    assert rc == 8, vm.transcript()
    assert REPORT in vm.stderr, vm.transcript()


def test_sandbox_off_says_so_and_filters_nothing():
    # The same hook without filters: the call succeeds and the guest powers off normally.
    env = dict(os.environ, PLUGVM_SANDBOX_TEST="vcpu")
    rc, vm = run_plugvm("--sandbox", "off", "--qmp", "none", "--append", "halt", env=env,
                        timeout=TIMEOUT)
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm: sandbox: OFF \(--sandbox off\)", stream="stderr"), \
        vm.transcript()
    assert REPORT not in vm.stderr


def test_runas_unknown_user_is_a_usage_error():
    rc, vm = run_plugvm("--qmp", "none", "--runas", "no-such-user-plugvm")
    assert rc == 2, vm.transcript()
    assert "plugvm: --runas: no user 'no-such-user-plugvm'" in vm.stderr, vm.transcript()


# A hijacked thread's calls through the hook (ACTION), and the call each report names.
HIJACKED = {
    "tgkill-other": "tgkill (234)",
    "kill-other": "kill (62)",
    "setaffinity-other": "sched_setaffinity (203)",
    "setscheduler-other": "sched_setscheduler (144)",
    "unlink": "unlink (87)",
    "unlinkat": "unlinkat (263)",
    "open": "openat (257)",
    # an fd the kind does not own: stdin, or for vCPUs and the injector the console's stdout
    "write": "write (1)",
}
NOT_OWNED = {"main": 0, "console": 0, "vcpu": 1, "chaos-irq": 1}


@pytest.mark.parametrize("kind", ["main", "vcpu", "console", "chaos-irq"])
@pytest.mark.parametrize("action", sorted(HIJACKED))
def test_each_thread_kind_is_refused_what_a_hijacked_one_would_do(kind, action):
    hook = f"{kind}:write={NOT_OWNED[kind]}" if action == "write" else f"{kind}:{action}"
    env = dict(os.environ, PLUGVM_SANDBOX_TEST=hook)
    rc, vm = run_plugvm("--qmp", "none", "--append", "halt",
                        "--chaos=seed=1,stall=off,start=off,irq=1%:1ms", env=env,
                        timeout=TIMEOUT)
    assert rc == 8, vm.transcript()
    assert (f"plugvm: sandbox: the {kind} thread made a forbidden system call: "
            f"{HIJACKED[action]}; ending the VM") in vm.stderr, vm.transcript()
    assert "not refused" not in vm.stderr, vm.transcript()


# ---- the filters of a running VM, read back and run on made-up system calls ----

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long
PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
PTRACE_SECCOMP_GET_FILTER = 0x420c
WALL = 0x40000000
AUDIT_ARCH_X86_64 = 0xc000003e
ALLOW = 0x7fff0000
AT_FDCWD = -100 & (2**64 - 1)
NR = {"write": 1, "open": 2, "kill": 62, "rename": 82, "rmdir": 84, "creat": 85,
      "unlink": 87, "writev": 20, "sendto": 44, "sendmsg": 46, "pwrite64": 18,
      "sched_setparam": 142, "sched_setscheduler": 144, "setpriority": 141, "tkill": 200,
      "sched_setaffinity": 203, "tgkill": 234, "openat": 257, "unlinkat": 263,
      "renameat2": 316, "sched_setattr": 314, "rt_sigqueueinfo": 129,
      "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "pidfd_open": 434,
      "openat2": 437, "open_by_handle_at": 304, "ptrace": 101, "prlimit64": 302,
      "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "mount": 165, "unshare": 272,
      "setns": 308}


def read_filters(tid):
    """The seccomp programs of thread tid, the first installed first, each a list of (code,
    jt, jf, k): the thread is stopped (PTRACE_SEIZE + PTRACE_INTERRUPT, no signal) while
    read."""
    assert libc.ptrace(PTRACE_SEIZE, tid, None, None) == 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.ptrace(PTRACE_INTERRUPT, tid, None, None) == 0
        os.waitpid(tid, WALL)
        progs = []
        while True:
            n = libc.ptrace(PTRACE_SECCOMP_GET_FILTER, tid, len(progs), None)
            if n < 0:
                break
            buf = ctypes.create_string_buffer(8 * n)
            assert libc.ptrace(PTRACE_SECCOMP_GET_FILTER, tid, len(progs), buf) == n
            progs.append([struct.unpack_from("<HBBI", buf.raw, 8 * i) for i in range(n)])
        return progs
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)


def run_bpf(prog, data):
    """Classic BPF as the kernel runs a seccomp filter on struct seccomp_data."""
    a = x = pc = 0
    mem = [0] * 16
    while True:
        code, jt, jf, k = prog[pc]
        pc += 1
        cls, src = code & 7, (x if code & 8 else k)
        if cls == 0:  # LD
            a = {0x20: lambda: struct.unpack_from("<I", data, k)[0], 0x00: lambda: k,
                 0x60: lambda: mem[k], 0x80: lambda: len(data)}[code & 0xe0]()
        elif cls == 1:  # LDX
            x = {0x00: k, 0x60: mem[k], 0x80: len(data)}[code & 0xe0]
        elif cls == 2:
            mem[k] = a
        elif cls == 3:
            mem[k] = x
        elif cls == 4:  # ALU
            op = code & 0xf0
            a = {0x00: lambda: a + src, 0x10: lambda: a - src, 0x20: lambda: a * src,
                 0x30: lambda: a // src, 0x40: lambda: a | src, 0x50: lambda: a & src,
                 0x60: lambda: a << src, 0x70: lambda: a >> src, 0x80: lambda: -a,
                 0x90: lambda: a % src, 0xa0: lambda: a ^ src}[op]() & 0xffffffff
        elif cls == 5:  # JMP
            op = code & 0xf0
            if op == 0x00:
                pc += k
                continue
            cond = {0x10: a == src, 0x20: a > src, 0x30: a >= src, 0x40: bool(a & src)}[op]
            pc += jt if cond else jf
        elif cls == 6:  # RET
            return a if code & 0x18 == 0x10 else k
        else:  # MISC: TAX, TXA
            if code & 0xf8 == 0:
                x = a
            else:
                a = x


def verdict(progs, name, *args):
    """What the stacked filters decide for the call: the kernel takes the most restrictive
    action of all (the lowest as a signed 32-bit number)."""
    args = [v & (2**64 - 1) for v in args] + [0] * (6 - len(args))
    data = struct.pack("<iIQ6Q", NR[name], AUDIT_ARCH_X86_64, 0x401000, *args)
    acts = [run_bpf(p, data) & 0xffff0000 for p in progs]
    return min(acts, key=lambda v: v - 2**32 if v & 0x80000000 else v)


def allowed(progs, name, *args):
    return verdict(progs, name, *args) == ALLOW


def fds(pid):
    """{fd: what it is} of process pid."""
    return {int(f): os.readlink(f"/proc/{pid}/fd/{f}") for f in os.listdir(f"/proc/{pid}/fd")}


def test_filters_read_back_refuse_calls_aimed_outside_the_vm(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "2", "--qmp", path, "--chaos=seed=1,stall=off,start=off,irq=1%:1ms")
    with vm:
        vm.wait_for(r"^acpi-hotplug: ready", BOOT_TIMEOUT)
        wait_socket(path)
        pid = vm.proc.pid
        before = fds(pid)
        with Qmp(path) as q:
            q.cmd("query-status")  # the client is accepted
            after = fds(pid)
            client = [f for f, what in after.items()
                      if what.startswith("socket:") and f not in before]
            assert len(client) == 1, (before, after)
            client = client[0]
            # The socket's directory, opened for its removal at exit (checked last).
            qmp_dir = [f for f, what in after.items() if what == str(tmp_path)] or [1000]
            eventfds = {f for f, what in after.items() if what == "anon_inode:[eventfd]"}
            kinds = {}
            for tid, (name, _, _) in threads(pid).items():
                kinds.setdefault("vcpu" if name.startswith("vcpu") else name, []).append(tid)
            assert sorted(kinds) == ["chaos-irq", "console", "plugvm", "vcpu"], kinds
            checked = 0
            for name, tids in kinds.items():
                for tid in tids:
                    progs = read_filters(tid)
                    assert progs, f"thread {tid} ({name}) has no filter"
                    check_thread(name, tid, progs, pid, client, qmp_dir[0], eventfds,
                                 set(after))
                    checked += 1
            assert checked == 5
            assert qmp_dir[0] != 1000, after
            q.cmd("quit")
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
    assert not os.path.exists(path)


def check_thread(kind, tid, progs, pid, client, qmp_dir, eventfds, open_fds):
    what = f"{kind} thread {tid}"
    # Signals: never another process, in any form.
    for call in [("tgkill", 1, 1, 9), ("tgkill", pid + 1, pid + 1, 9), ("tkill", 1, 9),
                 ("kill", 1, 9), ("kill", -1, 9), ("kill", pid, 9),
                 ("rt_sigqueueinfo", 1, 9, 0), ("rt_tgsigqueueinfo", 1, 1, 9, 0),
                 ("pidfd_open", 1, 0), ("pidfd_send_signal", 3, 9, 0, 0), ("ptrace", 16, 1)]:
        assert not allowed(progs, *call), (what, call)
    # Scheduling: never another process (pid 1, or the tid of another thread's pid).
    for call in [("sched_setaffinity", 1, 128, 0), ("sched_setscheduler", 1, 1, 0),
                 ("sched_setaffinity", pid + 1, 128, 0), ("sched_setattr", 1, 0, 0),
                 ("sched_setparam", 1, 0), ("setpriority", 0, 1, -20),
                 ("prlimit64", 1, 7, 0, 0)]:
        assert not allowed(progs, *call), (what, call)
    # Files: no unlink, no open of any kind, anywhere.
    for call in [("unlink", 0x1000), ("unlinkat", AT_FDCWD, 0x1000, 0), ("rmdir", 0x1000),
                 ("unlinkat", qmp_dir, 0x1000, 0x200), ("rename", 0x1000, 0x2000),
                 ("renameat2", AT_FDCWD, 0x1000, AT_FDCWD, 0x2000, 0), ("open", 0x1000, 0),
                 ("openat", AT_FDCWD, 0x1000, 0), ("openat", qmp_dir, 0x1000, 0),
                 ("creat", 0x1000, 0o644), ("openat2", AT_FDCWD, 0x1000, 0x2000, 24),
                 ("open_by_handle_at", qmp_dir, 0x1000, 0)]:
        assert not allowed(progs, *call), (what, call)
    for fd in set(open_fds) | {client, 100}:
        for f in (fd, fd | 1 << 32):
            assert not allowed(progs, "unlinkat", f, 0x1000, 0) or \
                (kind == "plugvm" and fd == qmp_dir), (what, "unlinkat", f)
    # Writes: the log (2), and only the fds the kind owns; a QMP client through send(2)
    # from the main thread alone.
    owned = {"plugvm": {1, 2} | eventfds, "vcpu": {2} | eventfds, "console": {1, 2},
             "chaos-irq": {2}}[kind]
    for fd in set(open_fds) | {client, 100}:
        if allowed(progs, "write", fd, 0x1000, 8):
            assert fd in owned, (what, "write", fd)
        for call in ["writev", "pwrite64", "sendmsg"]:
            assert not allowed(progs, call, fd, 0x1000, 1) or \
                (call == "writev" and fd in owned and kind == "plugvm"), (what, call, fd)
    assert not allowed(progs, "write", client, 0x1000, 8), (what, "write to the QMP client")
    assert allowed(progs, "sendto", client, 0x1000, 8, 0, 0, 0) == (kind == "plugvm"), what
    # What the kind does need still passes: the filters are not just closed.
    assert allowed(progs, "write", 2, 0x1000, 8), what
    if kind == "console":
        assert allowed(progs, "write", 1, 0x1000, 8), what
    if kind == "plugvm":
        assert allowed(progs, "unlinkat", qmp_dir, 0x1000, 0), what
    if kind in ("plugvm", "vcpu"):
        assert allowed(progs, "tgkill", pid, tid, 10), what
        assert allowed(progs, "write", min(eventfds), 0x1000, 8), what  # the stop eventfd
    if kind == "vcpu":
        assert allowed(progs, "sched_setaffinity", 0, 128, 0x1000), what
        assert allowed(progs, "sched_setscheduler", 0, 1, 0x1000), what
