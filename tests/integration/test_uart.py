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
