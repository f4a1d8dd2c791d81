# SPDX-License-Identifier: MIT
"""The VMM's least privilege (docs/security.md): every thread of a running VM under its
seccomp filter (`Seccomp: 2` in /proc), hot-add after the filters are in, --runas, a
forbidden system call from a vCPU thread ending the VM with the report that names the
thread kind and the call, and --sandbox off saying so.

The forbidden call is provoked through PLUGVM_SANDBOX_TEST=KIND, a hook that exists only
for this test: the thread of that kind makes one getppid() right after entering its
sandbox. Sanitizer builds run without filters (their runtimes need calls no list allows):
`make check-san` leaves this file out.
"""
import glob
import os
import pwd

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
