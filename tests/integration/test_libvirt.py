# SPDX-License-Identifier: MIT
"""The guest under libvirt's QEMU driver, end to end, on `pc` and `q35`: virsh create,
setvcpus up to 4 and 8 (the guest brings the CPUs online), setvcpu N --disable and setvcpus
down to 1 (it ejects them), shutdown (the power button), destroy. libvirtd is started by scripts/libvirt-setup.sh if it is not running,
and only what this module started is stopped. One domain per machine does the whole life
(grow first, shrink last: QEMU 7.2 here cannot re-add a CPU it removed)."""
import os
import re
import subprocess
import time

import pytest

from vm import GUEST, QEMU_TIMEOUT, ROOT

# libvirtd and QEMU domains: 12 to 30 s each here.
pytestmark = pytest.mark.slow

SETUP = os.path.join(ROOT, "scripts", "libvirt-setup.sh")
DOMAIN = os.path.join(ROOT, "scripts", "libvirt-domain.sh")
EXAMPLE = os.path.join(ROOT, "configs", "libvirt", "qemu-guest.xml")
LOGDIR = "/var/log/libvirt/qemu"


def virsh(*args, check=True):
    r = subprocess.run(["virsh", "-c", "qemu:///system", *args], capture_output=True,
                       text=True, timeout=QEMU_TIMEOUT)
    if check:
        assert r.returncode == 0, f"virsh {' '.join(args)}: {r.stdout}{r.stderr}"
    return r


@pytest.fixture(scope="module")
def libvirtd(tmp_path_factory):
    env = dict(os.environ, PLUGVM_LIBVIRT_STATE=str(tmp_path_factory.mktemp("lv") / "started"))
    r = subprocess.run([SETUP, "start"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, "libvirt-setup.sh start failed:\n" + r.stdout + r.stderr
    yield
    subprocess.run([SETUP, "stop"], env=env, timeout=120, check=True)


class Domain:
    def __init__(self, tmp_path, machine, tag):
        self.name = f"plugvm-test-{os.getpid()}-{tag}-{machine}"
        self.log = os.path.join(LOGDIR, f"{self.name}.serial.log")
        xml = subprocess.run([DOMAIN, EXAMPLE, self.name, GUEST], capture_output=True,
                             text=True, check=True).stdout
        xml = xml.replace("machine='pc'", f"machine='{machine}'")
        self.xml = tmp_path / f"{machine}.xml"
        self.xml.write_text(xml)

    def __enter__(self):
        if os.path.exists(self.log):
            os.unlink(self.log)
        virsh("create", str(self.xml))
        return self

    def __exit__(self, *exc):
        virsh("destroy", self.name, check=False)  # only if a check failed midway
        if os.path.exists(self.log):
            os.unlink(self.log)

    def text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(self, pattern, count=1, timeout=QEMU_TIMEOUT):
        """Wait for `count` lines of the serial log matching `pattern` (a deadline bounds
        the wait; the file is re-read as QEMU appends to it)."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while len(rx.findall(self.text())) < count:
            assert time.monotonic() < deadline, \
                f"{self.name}: no {count}x /{pattern}/ in {timeout}s:\n{self.text()}"
            time.sleep(0.1)

    def vcpucount(self):
        out = virsh("vcpucount", self.name).stdout
        return {tuple(l.split()[:2]): int(l.split()[2]) for l in out.splitlines() if l.strip()}

    def running(self):
        return self.name in virsh("list", "--name").stdout.split()


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
        deadline = time.monotonic() + QEMU_TIMEOUT
        while d.running():  # a transient domain goes away when QEMU exits
            assert time.monotonic() < deadline, d.text()
            time.sleep(0.1)
        assert "BUG:" not in d.text(), d.text()


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_libvirt_destroy(libvirtd, tmp_path, machine):
    with Domain(tmp_path, machine, "destroy") as d:
        d.wait_for(r"^plugvm-guest: 1/1 CPUs online$")
        virsh("destroy", d.name)
        assert not d.running()
