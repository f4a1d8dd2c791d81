# SPDX-License-Identifier: MIT
"""plugvm managed by libvirt 9.0's own QEMU driver: a domain names build/plugvm-qemu in
<emulator>, and virsh probes it, creates, defines and starts it, resizes it live (up, down, and
up again through the removed slots), pins it, suspends and resumes it, reboots it, shuts it
down, destroys and undefines it, on `pc` and `q35`; libvirtd restarts under a running domain;
libvirt's real-time knobs land on plugvm's threads; a document with a <disk> is refused,
naming it; vCPUs on demand turned on through libvirt's QMP passthrough follow `virsh
setvcpus`, and libvirt's count follows them (docs/autoscale.md). The domain documents are written here, outside the repository (issue 24's check).
libvirt's daemons: the session fixture `libvirtd` (conftest.py)."""
import json
import os
import re
import subprocess
import time

import pytest

from lv import LOGDIR, LogDomain, virsh
from vm import GUEST, QEMU_TIMEOUT, ROOT

FRONT = os.path.join(ROOT, "build", "plugvm-qemu")
MAXCPUS = 4

DOC = """<domain type='kvm'>
  <name>{name}</name>
  <memory unit='MiB'>64</memory>
  <vcpu placement='static' current='{current}'>{maxcpus}</vcpu>
  {cputune}
  <os>
    <type arch='x86_64' machine='{machine}'>hvm</type>
    <kernel>{kernel}</kernel>
    <cmdline>{cmdline}</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='host-passthrough'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{front}</emulator>
    <controller type='usb' model='none'/>
    <serial type='file'>
      <source path='{log}'/>
      <target port='0'/>
    </serial>
    <console type='file'>
      <source path='{log}'/>
      <target type='serial' port='0'/>
    </console>
    <memballoon model='none'/>
    {extra}
  </devices>
</domain>
"""


class PlugvmDomain(LogDomain):
    """A plugvm domain under libvirt: `machine`, `current` of MAXCPUS vCPUs at start."""

    def __init__(self, tmp_path, tag, machine="pc", current=1, cputune="", extra="",
                 cmdline=""):
        name = f"plugvm-lv-{os.getpid()}-{tag}-{machine}"
        log = os.path.join(LOGDIR, f"{name}.serial.log")
        xml = DOC.format(name=name, machine=machine, current=current, maxcpus=MAXCPUS,
                         kernel=GUEST, front=FRONT, log=log, cputune=cputune, extra=extra,
                         cmdline=cmdline)
        super().__init__(name, xml, log)
        self.tmp_path = tmp_path

    def start(self):
        r = self.create(self.tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr + self.emulator_log()
        return self

    def emulator_log(self):
        try:
            with open(os.path.join(LOGDIR, f"{self.name}.log"), errors="replace") as f:
                return f.read()[-4000:]
        except FileNotFoundError:
            return ""

    def pid(self):
        with open(f"/run/libvirt/qemu/{self.name}.pid") as f:
            return int(f.read())

    def online(self, n):
        self.wait_for(rf"^plugvm-guest: {n}/{n} CPUs online$")

    def vcpu_threads(self):
        """vCPU number -> its thread id, from `virsh qemu-monitor-command`-free sources:
        libvirt's own view (`virsh vcpuinfo`'s vCPUs) matched to plugvm's thread names."""
        pid = self.pid()
        out = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                m = re.fullmatch(r"vcpu(\d+)\n", f.read())
            if m:
                out[int(m.group(1))] = int(tid)
        return out


def wait_count(d, n):
    """libvirt's live vCPU count reaches n (it updates it from QMP after each operation)."""
    deadline = time.monotonic() + QEMU_TIMEOUT
    while d.vcpucount()[("current", "live")] != n:
        assert time.monotonic() < deadline, d.vcpucount()
        time.sleep(0.05)


def test_domcapabilities_describe_plugvm(libvirtd):
    """The probe: plugvm's machine types, its maximum vCPUs, KVM; re-probed on a new ctime."""
    os.utime(FRONT, None, follow_symlinks=False)
    for machine, canonical in (("pc", "pc-i440fx-7.2"), ("q35", "pc-q35-7.2")):
        out = virsh("domcapabilities", "--emulatorbin", FRONT, "--virttype", "kvm",
                    "--machine", machine).stdout
        assert f"<machine>{canonical}</machine>" in out, out
        assert "<domain>kvm</domain>" in out, out
        m = re.search(r"<vcpu max='(\d+)'/>", out)
        assert m and int(m.group(1)) >= 2, out


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_setvcpus_up_down_and_up_again(libvirtd, tmp_path, machine):
    """setvcpus --live up, down, and up again through the removed slots (QEMU 7.2 cannot
    re-add here), libvirt's counts and the guest's console lines agreeing; then shutdown
    (the power button) until the domain is gone."""
    with PlugvmDomain(tmp_path, "life", machine) as d:
        d.start()
        d.online(1)
        virsh("setvcpus", d.name, str(MAXCPUS), "--live")
        for cpu in range(1, MAXCPUS):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$")
        assert d.vcpucount() == {("maximum", "live"): MAXCPUS, ("current", "live"): MAXCPUS}
        assert sorted(d.vcpu_threads()) == list(range(MAXCPUS))
        virsh("setvcpus", d.name, "1", "--live")
        for cpu in range(1, MAXCPUS):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} offline, ejecting \(0\)$")
        assert d.vcpucount()[("current", "live")] == 1
        virsh("setvcpus", d.name, "3", "--live")
        for cpu in (1, 2):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$", count=2)
        assert d.vcpucount()[("current", "live")] == 3
        info = virsh("vcpuinfo", d.name).stdout
        assert len(re.findall(r"^VCPU:", info, re.M)) == 3, info
        assert "BUG:" not in d.text(), d.text()
        virsh("shutdown", d.name)
        d.wait_for(r"^acpi: power button: powering off$")
        d.wait_gone()


@pytest.mark.parametrize("machine", ["pc", "q35"])
def test_lifecycle_by_hand(libvirtd, tmp_path, machine):
    """define, start, list, dominfo, domstate, vcpupin --live, suspend/resume, reboot,
    destroy, undefine: what a user types, each checked against plugvm's state."""
    d = PlugvmDomain(tmp_path, "hand", machine, current=2)
    path = tmp_path / "hand.xml"
    path.write_text(d.xml_text)
    with d:
        virsh("define", str(path))
        assert d.name in virsh("list", "--all", "--name").stdout.split()
        virsh("start", d.name)
        d.online(2)
        assert d.state() == "running"
        info = virsh("dominfo", d.name).stdout
        assert re.search(r"^CPU\(s\):\s+2$", info, re.M), info
        assert re.search(r"^State:\s+running$", info, re.M), info
        # vcpupin: libvirt sets the affinity of plugvm's vCPU 1 thread itself.
        virsh("vcpupin", d.name, "1", "0", "--live")
        tid = d.vcpu_threads()[1]
        assert os.sched_getaffinity(tid) == {0}
        virsh("suspend", d.name)
        assert d.state() == "paused"
        virsh("resume", d.name)
        assert d.state() == "running"
        # reboot: libvirt powers the guest down (ACPI) and, as -no-shutdown keeps plugvm up,
        # resets it and lets it run again: the guest boots a second time in the same process.
        pid = d.pid()
        virsh("reboot", d.name)
        d.wait_for(r"^plugvm-guest: 2/2 CPUs online$", count=2)
        assert d.pid() == pid
        assert d.state() == "running"
        virsh("destroy", d.name)
        assert d.state() == "shut off"
        virsh("undefine", d.name)
        assert d.name not in virsh("list", "--all", "--name").stdout.split()


def test_libvirtd_restart_keeps_the_domain(libvirtd, tmp_path):
    """libvirtd restarts while a plugvm domain runs: it reconnects to plugvm's monitor, and
    setvcpus and shutdown still work."""
    with PlugvmDomain(tmp_path, "restart") as d:
        d.start()
        d.online(1)
        pid = d.pid()
        r = subprocess.run(["pgrep", "-x", "libvirtd"], capture_output=True, text=True)
        assert r.returncode == 0
        old = int(r.stdout.split()[0])
        os.kill(old, 15)
        deadline = time.monotonic() + 30
        while os.path.exists(f"/proc/{old}"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        from lv import start_daemons
        start_daemons(libvirtd)  # recorded in the session's state: stopped at its end
        assert d.running()
        assert d.pid() == pid
        virsh("setvcpus", d.name, "2", "--live")
        d.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$")
        wait_count(d, 2)
        virsh("shutdown", d.name)
        d.wait_gone()


RT_TUNE = """<cputune>
    <vcpupin vcpu='0' cpuset='1'/>
    <vcpupin vcpu='1' cpuset='0'/>
    <emulatorpin cpuset='0'/>
    <vcpusched vcpus='0-1' scheduler='fifo' priority='1'/>
  </cputune>"""


def test_realtime_knobs_land_on_plugvms_threads(libvirtd, tmp_path):
    """<cputune>: libvirt itself pins plugvm's vCPU threads and its emulator (main) thread
    and makes the vCPUs SCHED_FIFO; read back from the running threads, also for a vCPU
    hot-added later."""
    with PlugvmDomain(tmp_path, "rt", current=1, cputune=RT_TUNE) as d:
        d.start()
        d.online(1)
        virsh("setvcpus", d.name, "2", "--live")
        d.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$")
        threads = d.vcpu_threads()
        assert os.sched_getaffinity(threads[0]) == {1}
        assert os.sched_getaffinity(threads[1]) == {0}
        for tid in threads.values():
            assert os.sched_getscheduler(tid) == os.SCHED_FIFO
            assert os.sched_getparam(tid).sched_priority == 1
        assert os.sched_getaffinity(d.pid()) == {0}  # the emulator: plugvm's main thread
        virsh("destroy", d.name)


@pytest.mark.parametrize("extra, element", [
    ("<disk type='file' device='disk'><source file='/dev/null'/>"
     "<target dev='vda' bus='virtio'/></disk>", "<disk>"),
    ("<interface type='user'><model type='virtio'/></interface>", "<interface>"),
])
def test_what_plugvm_cannot_run_is_refused_by_name(libvirtd, tmp_path, extra, element):
    with PlugvmDomain(tmp_path, "refused", extra=extra) as d:
        r = d.create(tmp_path)
        assert r.returncode != 0
        assert element in r.stderr, r.stderr
        assert not d.running()


PTY_CONSOLE = """<serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>"""


def read_until(fd, needle, timeout=QEMU_TIMEOUT):
    """Bytes read from `fd` until `needle` appears (a deadline bounds the wait)."""
    import select
    buf = b""
    deadline = time.monotonic() + timeout
    while needle not in buf:
        left = deadline - time.monotonic()
        assert left > 0, f"no {needle!r} in {timeout}s: {buf[-2000:]!r}"
        if select.select([fd], [], [], left)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, f"console closed before {needle!r}: {buf[-2000:]!r}"
            buf += chunk
    return buf


def test_virsh_console_is_a_terminal(libvirtd, tmp_path):
    """`virsh console` on plugvm's pty: the guest's lines end in CRLF, and what is typed is
    echoed and reaches the guest's console monitor."""
    import pty
    d = PlugvmDomain(tmp_path, "console", extra=PTY_CONSOLE)
    d.xml_text = re.sub(r"<serial type='file'>.*?</console>\n", "", d.xml_text, flags=re.S)
    with d:
        d.start()
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp("virsh", ["virsh", "-c", "qemu:///system", "console", d.name, "--force"])
        try:
            # Typed only once the guest listens: bytes that reach the 16550 before the
            # guest's driver does are lost, as on hardware. Its boot lines reach the console
            # even if they came before virsh did (they wait in the pty), and by then virsh
            # has this terminal in raw mode (no local echo).
            read_until(fd, b"plugvm-guest: boot done")
            os.write(fd, b"echo hello-from-virsh\r")
            # The typed line echoed, its CR as CRLF, then the monitor's answer.
            out = read_until(fd, b"echo hello-from-virsh\r\nhello-from-virsh\r\n")
            text = out
            assert b"\n" not in text.replace(b"\r\n", b""), text  # no bare LF
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        virsh("destroy", d.name)


def test_readme_libvirt_section(libvirtd, tmp_path):
    """README's "Under libvirt" commands as written (test_readme.py holds them), in order;
    between them, what each promised: the domain up, 4 vCPUs online, then gone."""
    from test_readme import LIBVIRT_RUN
    env = dict(os.environ, PLUGVM_LIBVIRT_STATE=libvirtd)  # the session stops what it starts
    name = "plugvm-libvirt-pc"
    virsh("destroy", name, check=False)
    try:
        for cmd in LIBVIRT_RUN:
            r = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=QEMU_TIMEOUT)
            assert r.returncode == 0, f"{cmd}: {r.stdout}{r.stderr}"
            if cmd.startswith("virsh domcapabilities"):
                assert "<machine>pc-i440fx-7.2</machine>" in r.stdout, r.stdout
            elif cmd.startswith("virsh create"):
                assert name in virsh("list", "--name").stdout.split()
            elif cmd.startswith("virsh setvcpus"):
                d = LogDomain(name, "", "")
                wait_count(d, 4)
        deadline = time.monotonic() + QEMU_TIMEOUT
        while name in virsh("list", "--name").stdout.split():  # shutdown: the guest powers off
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        virsh("destroy", name, check=False)


def qmp(d, name, args=None):
    """One QMP command through libvirt (`virsh qemu-monitor-command`): its `return`."""
    cmd = {"execute": name}
    if args is not None:
        cmd["arguments"] = args
    out = virsh("qemu-monitor-command", d.name, json.dumps(cmd)).stdout
    reply = json.loads(out)
    assert "return" in reply, out
    return reply["return"]


def test_setvcpus_during_autoscaling_moves_its_range(libvirtd, tmp_path):
    """vCPUs on demand under libvirt (docs/autoscale.md): turned on over libvirt's QMP
    passthrough, then `virsh setvcpus` up and down: each is carried out, and the policy's
    range follows it (min up to 3, then max down to 1), so it never undoes the operator."""
    with PlugvmDomain(tmp_path, "scale") as d:
        d.start()
        d.online(1)
        assert qmp(d, "autoscale-set", {"min": 1, "max": MAXCPUS}) == {}
        virsh("setvcpus", d.name, "3", "--live")
        for cpu in (1, 2):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$")
        wait_count(d, 3)
        a = qmp(d, "query-autoscale")
        assert (a["enabled"], a["min"], a["max"]) == (True, 3, MAXCPUS), a
        virsh("setvcpus", d.name, "1", "--live")
        for cpu in (1, 2):
            d.wait_for(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} offline, ejecting \(0\)$")
        wait_count(d, 1)
        a = qmp(d, "query-autoscale")
        assert (a["min"], a["max"]) == (1, 1), a
        assert a["counters"]["adds"] == 0 and a["counters"]["removes"] == 0, a
        assert "BUG:" not in d.text(), d.text()
        virsh("destroy", d.name)


def test_libvirt_adopts_the_vcpus_autoscaling_adds(libvirtd, tmp_path):
    """libvirt has no event for a vCPU it did not add: the one the policy adds under load is
    not in its count, and `virsh setvcpus` up asks for it again by its name (vcpu1) and
    slot, which adopts it (autoscale.h: autoscale_adopt()) instead of failing as a
    duplicate. A vCPU the policy removes, libvirt follows (DEVICE_DELETED of vcpu1)."""
    with PlugvmDomain(tmp_path, "adopt") as d:
        d.start()
        d.online(1)
        assert qmp(d, "autoscale-set", {"min": 1, "max": 2}) == {}
        wl = qmp(d, "workload-start", {"kind": "hog", "threads": 2, "period-us": 10})
        d.wait_for(r"^acpi-hotplug: slot 1: cpu 1 online \(0\)$")
        assert d.vcpucount()[("current", "live")] == 1
        virsh("setvcpus", d.name, "2", "--live")
        wait_count(d, 2)
        a = qmp(d, "query-autoscale")
        assert (a["min"], a["max"], a["counters"]["adds"]) == (2, 2, 1), a
        info = virsh("vcpuinfo", d.name).stdout
        assert len(re.findall(r"^VCPU:", info, re.M)) == 2, info
        # Handed back; idle now, the policy removes vcpu1 and libvirt's count follows.
        qmp(d, "workload-stop", {"id": wl["id"]})
        assert qmp(d, "autoscale-set", {"min": 1, "max": 2}) == {}
        d.wait_for(r"^acpi-hotplug: slot 1: cpu 1 offline, ejecting \(0\)$")
        wait_count(d, 1)
        assert "BUG:" not in d.text(), d.text()
        virsh("destroy", d.name)
