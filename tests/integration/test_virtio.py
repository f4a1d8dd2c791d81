# SPDX-License-Identifier: MIT
"""virtio-mmio and the virtio console on the real VMM: the console takes over from the 16550
once its driver is up (and the 16550 stays with virtio_console=off, --virtio off and on
QEMU), typed input reaches the guest's line monitor, feature negotiation with sets the device
did not offer is refused, and a guest that posts malformed descriptors and messages on the
agent channel gets NEEDS_RESET and its messages dropped while the VMM and the VM carry on.
"""
import array
import fcntl
import re
import subprocess
import termios
import time

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, PLUGVM, plugvm, run_plugvm, selftests

TIMEOUT = 3 * BOOT_TIMEOUT
FLOOD = re.compile(r"^selftest console_flood: bytes=(\d+) ns=(\d+) bytes_per_s=(\d+) "
                   r"console=(\w+)$")


def flood(*args, append=""):
    rc, vm = run_plugvm(*args, "--append",
                        f"{append} selftest=console_flood console_flood.bytes=20000".strip(),
                        timeout=TIMEOUT)
    assert rc == 0, vm.transcript()
    m = [FLOOD.match(l.string) for l in vm.lines(r"^selftest console_flood: bytes=")]
    assert m and m[0], vm.transcript()
    # Every flood line arrived, in order, whatever the console.
    lines = [l.string for l in vm.lines(r"^flood \d{8} ")]
    assert len(lines) == 200 and lines[0].startswith("flood 00000000 ") \
        and lines[-1].startswith("flood 00000199 "), vm.transcript()
    return m[0].group(4), vm


def test_console_goes_through_virtio_and_falls_back_to_the_16550():
    assert flood()[0] == "virtio"
    assert flood(append="virtio_console=off")[0] == "uart"
    via, vm = flood("--virtio", "off")
    assert via == "uart"
    assert not vm.lines(r"virtio|warning", stream="stdout"), vm.transcript()


def test_typed_input_reaches_the_guest_console():
    vm = plugvm("--smp", "2", "--qmp", "none", "--append", "verbose", stdin=subprocess.PIPE)
    with vm:
        vm.wait_for(r"^virtio-console: input ready", TIMEOUT)
        for line in [b"echo hello from the host\n", b"cpus\n", b"bogus-command\n"]:
            vm.proc.stdin.write(line)
            vm.proc.stdin.flush()
        vm.wait_for(r"^hello from the host$", TIMEOUT)
        vm.wait_for(r"^cpus: 2 online of 2 present", TIMEOUT)
        vm.wait_for(r"^monitor: unknown command 'bogus-command'", TIMEOUT)
        vm.proc.stdin.write(b"poweroff\n")
        vm.proc.stdin.flush()
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()


def test_feature_negotiation_with_unexpected_features_is_refused():
    rc, vm = run_plugvm("-v", "--append", "selftest=virtio_features", timeout=TIMEOUT)
    assert rc == 0 and selftests(vm) == {"virtio_features": "pass"}, vm.transcript()
    assert vm.lines(r"^selftest virtio_features: offered=0x100000000 refused=\d+ accepted=1$")


def test_guest_junk_on_the_agent_channel_leaves_the_vmm_running(tmp_path):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("--smp", "2", "--qmp", path, "--append",
                "selftest=virtio_junk,virtio_features selftest.stay")
    with vm:
        wait_socket(path)
        vm.wait_for(r"^selftest: done \(all passed\), staying up$", TIMEOUT)
        assert selftests(vm) == {"virtio_junk": "pass", "virtio_features": "pass"}, \
            vm.transcript()
        m = vm.lines(r"^selftest virtio_junk: bad_rings=(\d+) needs_reset=(\d+) "
                     r"bad_messages=(\d+) consumed=(\d+)$")
        assert m, vm.transcript()
        nums = [int(x) for x in m[0].groups()]
        assert nums[0] == nums[1] >= 8 and nums[2] == nums[3] >= 5, m
        # The VMM said why, once per broken ring (rate-limited), and kept going.
        assert vm.lines(r"virtio-agent: .*device needs a reset", stream="stderr"), \
            vm.transcript()
        with Qmp(path, timeout=TIMEOUT) as q:
            assert q.cmd("query-status")["status"] == "running"
            deadline = time.monotonic() + TIMEOUT
            while not q.cmd("query-agent")["connected"]:
                assert time.monotonic() < deadline, vm.transcript()
                time.sleep(0.05)
            a = q.cmd("query-agent")
            assert a["malformed"] >= 3 and a["skipped-bytes"] > 0, a
            # The agent works after all that.
            r = q.cmd("cpuhp-set-target", {"cpu": 1, "state": "offline"})
            assert r["success"], r
            assert q.cmd("cpuhp-set-target", {"cpu": 1, "state": "online"})["success"]
            q.cmd("quit")
        assert vm.wait_exit() == 0, vm.transcript()


def pipe_bytes(f):
    """Bytes waiting in the pipe behind file object f, and the pipe's capacity."""
    n = array.array("i", [0])
    fcntl.ioctl(f.fileno(), termios.FIONREAD, n)
    return n[0], fcntl.fcntl(f.fileno(), 1032)  # F_GETPIPE_SZ


@pytest.mark.parametrize("console", ["virtio", "uart"])
def test_console_reader_that_stalls_never_stalls_the_vm(tmp_path, console):
    # A reader that stops reading stalls neither the printing vCPU nor `quit`: the console
    # buffers a bounded amount and drops the rest (warned), and gives up on the reader at
    # exit after a bounded wait.
    path = str(tmp_path / "qmp.sock")
    err = open(tmp_path / "stderr", "w+")
    append = "selftest=console_flood console_flood.bytes=3000000 selftest.stay"
    if console == "uart":
        append += " virtio_console=off"
    proc = subprocess.Popen([PLUGVM, "--smp", "2", "--qmp", path, "--append", append],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
    try:
        wait_socket(path)
        deadline = time.monotonic() + TIMEOUT
        while True:  # the guest floods until the pipe nobody reads is full (to a page)
            queued, size = pipe_bytes(proc.stdout)
            if queued > size - 4096:
                break
            assert proc.poll() is None and time.monotonic() < deadline, open(err.name).read()
            time.sleep(0.2)
        with Qmp(path, timeout=TIMEOUT) as q:
            assert q.cmd("query-status")["running"]
            q.cmd("quit")
        # Before: the vCPU stuck in write(2) was never joined and plugvm never exited.
        assert proc.wait(TIMEOUT) == 0, open(err.name).read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        err.close()
