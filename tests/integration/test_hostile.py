# SPDX-License-Identifier: MIT
"""A hostile guest cannot hurt the VMM (docs/security.md): `selftest=hostile`
writes random and adversarial values to every port, MMIO register and virtqueue plugvm
exposes for a fixed time from a fixed seed; afterwards plugvm still answers QMP, has kept
and hot-adds a CPU that comes online in the guest. On `--machine q35` too, where the CPU
hotplug block and GPE0 the guest hits are ICH9's (0x0cd8, 0x620).
"""
import pytest

from vm import BOOT_TIMEOUT, ready_with_qmp

TIMEOUT = 3 * BOOT_TIMEOUT
HOSTILE_MS = 3000


@pytest.mark.parametrize("seed,machine", [(1, "pc"), (20261204, "pc"), (1, "q35")])
def test_vmm_survives_a_hostile_guest_and_still_hot_adds(tmp_path, seed, machine):
    append = f"selftest=hostile selftest.stay hostile.seed={seed} hostile.ms={HOSTILE_MS}"
    done = r"^selftest: done \(all passed\), staying up$"
    with ready_with_qmp(tmp_path, "--machine", machine, "--smp", "1,maxcpus=2", "--append",
                        append, ready=done, timeout=TIMEOUT) as (vm, q):
        ops = vm.lines(r"^selftest hostile: seed=\d+ ms=\d+ ops=(\d+) agent=claimed$")
        assert ops and int(ops[0].group(1)) > 0, vm.transcript()
        assert q.cmd("query-status")["status"] == "running"
        q.cmd("device_add", {"driver": "host-x86_64-cpu", "id": "cpu1", "socket-id": 0,
                             "core-id": 1, "thread-id": 0})
        ev = q.wait_event("ACPI_DEVICE_OST", TIMEOUT)
        assert ev["data"]["info"] == {"device": "cpu1", "source": 1, "status": 0,
                                      "slot": "1", "slot-type": "CPU"}, ev
        vm.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$", TIMEOUT)
        assert sorted(c["cpu-index"] for c in q.cmd("query-cpus-fast")) == [0, 1]
        q.cmd("quit")
        assert vm.wait_exit(TIMEOUT) == 0, vm.transcript()
