# SPDX-License-Identifier: MIT
"""libvirt helpers for the integration tests: virsh against libvirt's own daemons (started by
scripts/libvirt-setup.sh through the session fixture `libvirtd` in conftest.py), and a
domain whose serial console is a log file, waited on line by line."""
import os
import re
import subprocess
import time

from vm import QEMU_TIMEOUT, ROOT

SETUP = os.path.join(ROOT, "scripts", "libvirt-setup.sh")
LOGDIR = "/var/log/libvirt/qemu"


def virsh(*args, check=True, timeout=QEMU_TIMEOUT):
    r = subprocess.run(["virsh", "-c", "qemu:///system", *args], capture_output=True,
                       text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, f"virsh {' '.join(args)}: {r.stdout}{r.stderr}"
    return r


def start_daemons(state):
    """Start virtlogd and libvirtd unless they run; `state` records what was started. A
    machine without libvirt fails here, naming the packages (scripts/deps.sh installs them)."""
    env = dict(os.environ, PLUGVM_LIBVIRT_STATE=state)
    r = subprocess.run([SETUP, "start"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, ("libvirt-setup.sh start failed (scripts/deps.sh installs "
                               "libvirt-daemon-system and libvirt-clients):\n" + r.stdout + r.stderr)


def stop_daemons(state):
    env = dict(os.environ, PLUGVM_LIBVIRT_STATE=state)
    subprocess.run([SETUP, "stop"], env=env, timeout=120, check=True)


class LogDomain:
    """A transient domain from the XML text `xml`, created on entry and destroyed on exit if
    it still runs; its serial console is the file `log` (libvirt writes it through
    virtlogd)."""

    def __init__(self, name, xml, log):
        self.name, self.xml_text, self.log = name, xml, log

    def create(self, tmp_path, *flags):
        if os.path.exists(self.log):
            os.unlink(self.log)
        path = tmp_path / f"{self.name}.xml"
        path.write_text(self.xml_text)
        return virsh("create", str(path), *flags, check=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        virsh("destroy", self.name, check=False)  # only if a check failed midway
        virsh("undefine", self.name, check=False)
        if os.path.exists(self.log):
            os.unlink(self.log)

    def text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(self, pattern, count=1, timeout=QEMU_TIMEOUT):
        """Wait for `count` lines of the serial log matching `pattern` (CRLF line ends
        allowed; a deadline bounds the wait; the file is re-read as it grows)."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while len(rx.findall(self.text().replace("\r\n", "\n"))) < count:
            assert time.monotonic() < deadline, \
                f"{self.name}: no {count}x /{pattern}/ in {timeout}s:\n{self.text()}"
            time.sleep(0.05)

    def vcpucount(self):
        out = virsh("vcpucount", self.name).stdout
        return {tuple(l.split()[:2]): int(l.split()[2]) for l in out.splitlines() if l.strip()}

    def running(self):
        return self.name in virsh("list", "--name").stdout.split()

    def state(self):
        return virsh("domstate", self.name).stdout.strip()

    def wait_gone(self, timeout=QEMU_TIMEOUT):
        deadline = time.monotonic() + timeout
        while self.running():  # a transient domain goes away when its emulator exits
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.05)
