# SPDX-License-Identifier: MIT
"""Typed console input through the 16550 (interrupt-driven receive path) reaches the console
monitor: on QEMU, which has no virtio console, and on plugvm with --virtio off."""
import subprocess

import pytest

from vm import BOOT_TIMEOUT, QEMU_TIMEOUT, plugvm, qemu


def _type(vm, text):
    vm.proc.stdin.write(text.encode())
    vm.proc.stdin.flush()


@pytest.mark.parametrize("where", ["qemu", "plugvm"])
def test_typed_input_through_the_16550(where):
    if where == "qemu":
        vm, timeout = qemu("-smp", "2", "--append", "", stdin=subprocess.PIPE), QEMU_TIMEOUT
    else:
        vm, timeout = plugvm("--smp", "2", "--virtio", "off", "--qmp", "none", "--append", "",
                             stdin=subprocess.PIPE), BOOT_TIMEOUT
    with vm:
        vm.wait_for(r"^plugvm-guest: boot done", timeout=timeout)
        _type(vm, "echo hello from\b\b\b\bthe 16550\n")
        vm.wait_for(r"^hello the 16550$", timeout=timeout)
        _type(vm, "cpus\r")
        vm.wait_for(r"^cpus: 2 online of 2 present \(2 possible\): 0 1$", timeout=timeout)
        _type(vm, "poweroff\n")
        assert vm.wait_exit(timeout=timeout) == 0, vm.transcript()
        assert vm.lines(r"^monitor: powering off$"), vm.transcript()


@pytest.mark.parametrize("console", ["virtio", "16550"])
def test_the_console_echoes_typed_input_and_ends_lines_with_crlf(console):
    """What a serial terminal (virsh console) needs: every line the guest writes ends in
    CR LF, and typed bytes come back as typed (a backspace or DEL that erases as BS SP BS)."""
    extra = ("--virtio", "off") if console == "16550" else ()
    vm = plugvm("--smp", "2", "--qmp", "none", *extra, "--append", "verbose",
                stdin=subprocess.PIPE)
    with vm:
        vm.wait_for(r"^plugvm-guest: boot done", timeout=BOOT_TIMEOUT)
        _type(vm, "echo abc\x7fd\bx\r")
        vm.wait_for(r"^abx$", timeout=BOOT_TIMEOUT)
        _type(vm, "cpus\r\n")
        vm.wait_for(r"^cpus: 2 online", timeout=BOOT_TIMEOUT)
        _type(vm, "poweroff\n")
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()
        raw = list(vm.stdout_raw)
    assert b"echo abc\b \bd\b \bx\r\n" in raw, vm.transcript()
    assert raw.index(b"echo abc\b \bd\b \bx\r\n") + 1 == raw.index(b"abx\r\n"), raw
    # One echoed line end for CR LF: the answer follows the echoed command directly.
    assert raw[raw.index(b"cpus\r\n") + 1].startswith(b"cpus: 2 online"), raw
    assert b"plugvm-guest: 2/2 CPUs online\r\n" in raw, raw
    assert b"poweroff\r\n" in raw and b"monitor: powering off\r\n" in raw, raw
    bare = [line for line in raw if not line.endswith(b"\r\n")]
    assert not bare, f"lines without CR LF: {bare}"
