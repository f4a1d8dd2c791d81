# SPDX-License-Identifier: MIT
"""The guest under libvirt's QEMU driver, end to end, on `pc` and `q35`: virsh create,
setvcpus up to 4 and 8 (the guest brings the CPUs online), setvcpu N --disable and setvcpus
down to 1 (it ejects them), shutdown (the power button), destroy. libvirtd is started by scripts/libvirt-setup.sh if it is not running,
and only what the session started is stopped (conftest.py). One domain per machine does the whole life
(grow first, shrink last: QEMU 7.2 here cannot re-add a CPU it removed)."""
import os
import subprocess

import pytest

from lv import LOGDIR, LogDomain, virsh
from vm import GUEST, ROOT

# libvirtd and QEMU domains: 12 to 30 s each here.
pytestmark = pytest.mark.slow

DOMAIN = os.path.join(ROOT, "scripts", "libvirt-domain.sh")
EXAMPLE = os.path.join(ROOT, "configs", "libvirt", "qemu-guest.xml")


class Domain(LogDomain):
    """The QEMU example domain on `machine`, created on entry."""

    def __init__(self, tmp_path, machine, tag):
        name = f"plugvm-test-{os.getpid()}-{tag}-{machine}"
        xml = subprocess.run([DOMAIN, EXAMPLE, name, GUEST], capture_output=True,
                             text=True, check=True).stdout
        super().__init__(name, xml.replace("machine='pc'", f"machine='{machine}'"),
                         os.path.join(LOGDIR, f"{name}.serial.log"))
        self.tmp_path = tmp_path

    def __enter__(self):
        r = self.create(self.tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        return self


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_libvirt_setvcpus_and_shutdown(libvirtd, tmp_path, machine):
    with Domain(tmp_path, machine, "life") as d:
        layout = {"pc": r"pc \(PIIX4\) block at 0xaf00", "q35": r"q35 \(ICH9\) block at 0xcd8"}
        d.wait_for(rf"^acpi-hotplug: ready \({layout[machine]}, 8 slots")
        virsh("setvcpus", d.name, "4", "--live")
        for cpu in (1, 2, 3):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$")
        assert d.vcpucount() == {("maximum", "live"): 8, ("current", "live"): 4}
        virsh("setvcpus", d.name, "8", "--live")
        for cpu in range(4, 8):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$")
        virsh("setvcpu", d.name, "5", "--disable", "--live")  # one chosen vCPU
        d.wait_for(r"^acpi-hotplug: slot 5: cpu 5 offline, ejecting \(0\)$")
        assert d.vcpucount()[("current", "live")] == 7
        virsh("setvcpus", d.name, "1", "--live")
        for cpu in (1, 2, 3, 4, 6, 7):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} offline, ejecting \(0\)$")
        assert d.vcpucount()[("current", "live")] == 1
        virsh("shutdown", d.name)
        d.wait_for(r"^acpi: power button: powering off$")
        d.wait_gone()
        assert "BUG:" not in d.text(), d.text()


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_libvirt_destroy(libvirtd, tmp_path, machine):
    with Domain(tmp_path, machine, "destroy") as d:
        d.wait_for(r"^plugvm-guest: 1/1 CPUs online$")
        virsh("destroy", d.name)
        assert not d.running()
