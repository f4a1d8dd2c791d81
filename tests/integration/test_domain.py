# SPDX-License-Identifier: MIT
"""`plugvm --domain FILE.xml`: the configs/libvirt/ examples (valid for libvirt's own schema,
and booting with the CPUs they configure), flags over the document, clear refusals, and
libvirt's real-time knobs read back from the running threads."""
import glob
import os
import signal
import subprocess
import time

import pytest

from qmp import Qmp, wait_socket
from vm import BOOT_TIMEOUT, GUEST, PLUGVM, ROOT, plugvm, run_plugvm

EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "configs", "libvirt", "*.xml")))
PLUGVM_EXAMPLES = [f for f in EXAMPLES if os.path.basename(f).startswith("plugvm-")]


def test_examples_exist():
    names = {os.path.basename(f) for f in EXAMPLES}
    assert {"plugvm-domain.xml", "plugvm-rt.xml", "qemu-guest.xml", "plugvm-libvirt-pc.xml",
            "plugvm-libvirt-q35.xml"} <= names, names


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_validates_against_libvirts_schema(path):
    r = subprocess.run(["virt-xml-validate", path, "domain"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


LIBVIRT_EXAMPLES = [f for f in EXAMPLES if os.path.basename(f).startswith("plugvm-libvirt-")]


def _tree_copy(path, tmp_path):
    """scripts/libvirt-domain.sh's copy of an example, naming this tree's paths."""
    r = subprocess.run([os.path.join(ROOT, "scripts", "libvirt-domain.sh"), path],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / os.path.basename(path)
    out.write_text(r.stdout)
    return str(out), r.stdout


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_the_tree_copy_of_each_example_validates_and_names_the_tree(path, tmp_path):
    copy, text = _tree_copy(path, tmp_path)
    r = subprocess.run(["virt-xml-validate", copy, "domain"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    rt = "guest-rt.elf" in open(path).read()
    assert f"<kernel>{ROOT}/build/{'rt/' if rt else ''}guest.elf</kernel>" in text, text
    if "plugvm-qemu" in open(path).read():
        assert f"<emulator>{ROOT}/build/plugvm-qemu</emulator>" in text, text


@pytest.mark.parametrize("path", LIBVIRT_EXAMPLES, ids=os.path.basename)
def test_libvirt_examples_name_the_installed_paths_and_boot_on_plugvm(path, tmp_path):
    """What libvirt runs through plugvm-qemu, plugvm --domain runs too: 1 of 4 vCPUs, the
    pty console taken as plugvm's stdio (a warning)."""
    text = open(path).read()
    assert "<emulator>/usr/local/bin/plugvm-qemu</emulator>" in text
    assert "<kernel>/usr/local/lib/plugvm/guest.elf</kernel>" in text
    assert "<vcpu placement='static' current='1'>4</vcpu>" in text
    assert "<on_reboot>restart</on_reboot>" in text
    for want in ["<controller type='usb' model='none'/>", "<memballoon model='none'/>",
                 "<serial type='pty'>", "<console type='pty'>"]:
        assert want in text, want
    copy, _ = _tree_copy(path, tmp_path)
    rc, vm = run_plugvm("--domain", copy, "--qmp", "none", "--append", "halt")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: 1/1 CPUs online$"), vm.transcript()
    assert vm.lines(r"<serial type='pty'>", stream="stderr"), vm.transcript()


PLUGCTL = os.environ.get("PLUGCTL_BIN", os.path.join(ROOT, "build", "plugctl"))


def plugctl(sock, *args):
    r = subprocess.run([PLUGCTL, "-s", sock, *args], capture_output=True, text=True,
                       timeout=BOOT_TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_plugvm_domain_example_boots_its_cpus_and_plugctl_speaks_virsh(tmp_path):
    # 2 boot vCPUs, vCPU 2 hot-added at start (enabled + hotpluggable), 4 possible; the
    # document's QMP socket path is overridden by the flag. Then plugctl's virsh words on the
    # same VM: vcpucount, setvcpus, and dumpxml, which validates and boots again.
    path = str(tmp_path / "qmp.sock")
    with plugvm("--domain", os.path.join(ROOT, "configs/libvirt/plugvm-domain.xml"),
                "--kernel", GUEST, "--qmp", path) as vm:
        vm.wait_for(r"^acpi-hotplug: slot 2: cpu 2 online \(0\)$", timeout=BOOT_TIMEOUT)
        assert vm.lines(r"^plugvm-guest: 4 possible CPUs, 2 present"), vm.transcript()
        assert vm.lines(r"^plugvm-guest: 2/2 CPUs online$"), vm.transcript()
        wait_socket(path)
        with Qmp(path) as q:
            cpus = q.cmd("query-cpus-fast")
            assert len(cpus) == 3, cpus
            slots = q.cmd("query-hotpluggable-cpus")
            assert [s.get("qom-path") for s in slots if s["props"]["core-id"] == 2] == [
                "/machine/peripheral/vcpu2"], slots
        assert plugctl(path, "vcpucount").split() == ["maximum", "live", "4",
                                                     "current", "live", "3"]
        plugctl(path, "setvcpus", "4")
        assert plugctl(path, "vcpucount").split()[-1] == "4"
        dumped = tmp_path / "dumped.xml"
        dumped.write_text(plugctl(path, "dumpxml"))
        r = subprocess.run(["virt-xml-validate", str(dumped), "domain"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr + dumped.read_text()
        plugctl(path, "quit")
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()
    # The dump boots: the same 2 boot CPUs, the 2 others hot-added at start.
    rc, vm = run_plugvm("--domain", str(dumped), "--qmp", "none", "--append", "halt")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: 4 possible CPUs, 2 present"), vm.transcript()
    for cpu in (2, 3):
        assert vm.lines(rf"^acpi-hotplug: slot {cpu}: cpu {cpu} online \(0\)$"), \
            vm.transcript()


def _comm(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/comm") as f:
        return f.read().strip()


def _policy_and_affinity(tid):
    return os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority, \
        os.sched_getaffinity(tid)


def test_rt_example_pins_and_schedules_the_threads(tmp_path):
    # <emulatorpin cpuset='0'>, <vcpupin> both vCPUs to 1, <vcpusched fifo priority 1>,
    # <memoryBacking><locked/>: read back from the kernel, thread by thread.
    if len(os.sched_getaffinity(0)) < 2:
        pytest.fail("this test needs 2 host CPUs (the example pins to CPUs 0 and 1)")
    path = str(tmp_path / "qmp.sock")
    with plugvm("--domain", os.path.join(ROOT, "configs/libvirt/plugvm-rt.xml"),
                "--kernel", GUEST, "--qmp", path) as vm:
        vm.wait_for(r"^plugvm-guest: 2/2 CPUs online$", timeout=BOOT_TIMEOUT)
        wait_socket(path)
        with Qmp(path) as q:
            vcpus = {c["cpu-index"]: c["thread-id"] for c in q.cmd("query-cpus-fast")}
            assert sorted(vcpus) == [0, 1]
            for tid in vcpus.values():
                assert _policy_and_affinity(tid) == (os.SCHED_FIFO, 1, {1}), tid
            pid = vm.proc.pid
            # KVM's own worker (kvm-nx-lpage-recovery) is made by the kernel from the
            # first KVM_RUN and inherits that vCPU's settings: not plugvm's thread.
            others = [int(t) for t in os.listdir(f"/proc/{pid}/task")
                      if int(t) not in vcpus.values() and not _comm(pid, t).startswith("kvm-")]
            assert pid in others
            for tid in others:
                assert _policy_and_affinity(tid) == (os.SCHED_OTHER, 0, {0}), tid
            with open(f"/proc/{pid}/status") as f:
                locked = [l for l in f if l.startswith("VmLck:")][0].split()
            assert int(locked[1]) * 1024 >= 64 << 20, locked  # all guest RAM
            q.cmd("system_powerdown")
        assert vm.wait_exit(timeout=BOOT_TIMEOUT) == 0, vm.transcript()
        # The host allowed everything: no "could not" warnings.
        assert not vm.lines(r"vcpusched|vcpupin|mlockall", stream="stderr"), vm.transcript()


def _write(tmp_path, text):
    p = tmp_path / "d.xml"
    p.write_text(text)
    return str(p)


GOOD = ("<domain type='kvm'><name>t</name><memory unit='MiB'>64</memory>"
        "<vcpu current='1'>3</vcpu><os><type>hvm</type><kernel>%s</kernel>"
        "<cmdline>halt</cmdline></os></domain>")


@pytest.mark.parametrize("machine,flags,block", [
    ("pc-q35-7.2", [], r"q35 \(ICH9\) block at 0xcd8"),
    ("q35", [], r"q35 \(ICH9\) block at 0xcd8"),
    ("pc-i440fx-7.2", [], r"pc \(PIIX4\) block at 0xaf00"),
    ("pc-q35-7.2", ["--machine", "pc"], r"pc \(PIIX4\) block at 0xaf00"),
    ("pc", ["-machine", "q35"], r"q35 \(ICH9\) block at 0xcd8"),
])
def test_type_machine_selects_the_layout_and_the_flag_overrides_it(tmp_path, machine, flags,
                                                                   block):
    doc = GOOD.replace("<type>", f"<type arch='x86_64' machine='{machine}'>") % GUEST
    rc, vm = run_plugvm("--domain", _write(tmp_path, doc), "--qmp", "none", *flags)
    assert rc == 0, vm.transcript()
    assert vm.lines(rf"^acpi-hotplug: ready \({block}, 3 slots"), vm.transcript()
    assert not vm.lines(r"machine=", stream="stderr"), vm.transcript()


def test_an_unknown_machine_is_taken_as_pc_with_a_warning(tmp_path):
    doc = GOOD.replace("<type>", "<type machine='microvm'>") % GUEST
    rc, vm = run_plugvm("--domain", _write(tmp_path, doc), "--qmp", "none")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"<os><type machine='microvm'>: plugvm presents QEMU's pc \(pc-i440fx-\*\) "
                    r"or q35 \(pc-q35-\*\): taken as pc$", stream="stderr"), vm.transcript()
    assert vm.lines(r"^acpi-hotplug: ready \(pc \(PIIX4\) block at 0xaf00"), vm.transcript()


@pytest.mark.parametrize("text,message", [
    ("<domain type='kvm'><name>x</name>", r"malformed XML"),
    ("<network/>", r"the root element is <network>, not a libvirt <domain>"),
    ("<domain type='kvm'><memory>65536</memory><vcpu current='4'>2</vcpu><os><type>hvm"
     "</type><kernel>/k</kernel></os></domain>", r"current is more than the maximum"),
    ("<domain type='kvm'><memory>65536</memory><vcpu>2</vcpu><os><type>hvm</type></os>"
     "</domain>", r"no <os><kernel>"),
    (GOOD.replace("</os>", "</os><devices><disk type='file'/></devices>"),
     r"<devices><disk>: not supported by plugvm"),
    (GOOD.replace("%s", "/nonexistent/guest.elf"),
     r"<kernel>/nonexistent/guest.elf</kernel>: No such file or directory \(give --kernel"),
])
def test_bad_documents_are_refused(tmp_path, text, message):
    rc, vm = run_plugvm("--domain", _write(tmp_path, text % GUEST if "%s" in text else text),
                        "--qmp", "none")
    assert rc == 2, vm.transcript()
    assert vm.lines(message, stream="stderr"), vm.transcript()


# What `virsh dumpxml` writes for a running domain that plugvm can run (libvirt 9.0's
# implicit devices, ids, aliases and label), with this tree's guest.
DUMPXML = """<domain type='kvm' id='7'>
  <name>dumped</name>
  <uuid>c7a5fdbd-edaf-9455-926a-d65c16db1809</uuid>
  <memory unit='KiB'>65536</memory>
  <currentMemory unit='KiB'>65536</currentMemory>
  <vcpu placement='static' current='2'>4</vcpu>
  <resource>
    <partition>/machine</partition>
  </resource>
  <os>
    <type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type>
    <kernel>%s</kernel>
    <cmdline>halt</cmdline>
    <boot dev='hd'/>
  </os>
  <features>
    <acpi/>
    <apic/>
  </features>
  <cpu mode='host-passthrough' check='none' migratable='on'/>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/local/bin/plugvm-qemu</emulator>
    <controller type='usb' index='0' model='none'>
      <alias name='usb'/>
    </controller>
    <controller type='pci' index='0' model='pci-root'>
      <alias name='pci.0'/>
    </controller>
    <serial type='pty'>
      <source path='/dev/pts/3'/>
      <target type='isa-serial' port='0'>
        <model name='isa-serial'/>
      </target>
      <alias name='serial0'/>
    </serial>
    <console type='pty' tty='/dev/pts/3'>
      <source path='/dev/pts/3'/>
      <target type='serial' port='0'/>
      <alias name='serial0'/>
    </console>
    <input type='mouse' bus='ps2'>
      <alias name='input0'/>
    </input>
    <input type='keyboard' bus='ps2'>
      <alias name='input1'/>
    </input>
    <audio id='1' type='none'/>
    <memballoon model='none'>
      <alias name='balloon0'/>
    </memballoon>
  </devices>
  <seclabel type='dynamic' model='dac' relabel='yes'>
    <label>+64055:+64055</label>
    <imagelabel>+64055:+64055</imagelabel>
  </seclabel>
</domain>
"""


def test_what_virsh_dumpxml_writes_boots_with_warnings_only(tmp_path):
    rc, vm = run_plugvm("--domain", _write(tmp_path, DUMPXML % GUEST), "--qmp", "none")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: 2/2 CPUs online"), vm.transcript()
    warned = "\n".join(vm.stderr)
    assert "<input>: ignored" in warned and "<seclabel>: ignored" in warned, warned
    assert "audio" not in warned and "memballoon" not in warned, warned
    assert not vm.lines(r"error|not supported", stream="stderr"), warned


@pytest.mark.parametrize("device", ["<disk type='file' device='disk'/>",
                                    "<interface type='network'/>",
                                    "<graphics type='vnc' port='-1'/>"])
def test_dumpxml_with_a_device_plugvm_cannot_have_is_refused_naming_it(tmp_path, device):
    doc = (DUMPXML % GUEST).replace("<audio id='1' type='none'/>", device)
    rc, vm = run_plugvm("--domain", _write(tmp_path, doc), "--qmp", "none")
    name = device[1:].split()[0]
    assert rc == 2, vm.transcript()
    assert vm.lines(rf"<devices><{name}>: not supported by plugvm", stream="stderr"), \
        vm.transcript()


def test_flags_override_the_document(tmp_path):
    # The document says 1 of 3 CPUs and `halt`; --smp and --append win.
    rc, vm = run_plugvm("--domain", _write(tmp_path, GOOD % "/nonexistent/guest.elf"),
                        "--kernel", GUEST, "--smp", "2,maxcpus=2", "--append", "halt",
                        "--qmp", "none")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: 2 possible CPUs, 2 present"), vm.transcript()
    # And the safe-to-ignore parts are warned about, by name.
    rc, vm = run_plugvm("--domain", _write(tmp_path, (GOOD % GUEST).replace(
        "</os>", "</os><devices><memballoon model='virtio'/></devices>")), "--qmp", "none")
    assert rc == 0, vm.transcript()
    assert vm.lines(r"<devices><memballoon model='virtio'>: ignored", stream="stderr"), \
        vm.transcript()


HOTADD = GOOD.replace("<vcpu current='1'>3</vcpu>", "<vcpu current='2'>3</vcpu><vcpus>"
                      "<vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='no'/>"
                      "<vcpu id='2' enabled='yes' hotpluggable='yes'/></vcpus>")
QMP_NONE = GOOD.replace("</os>", "</os><metadata><plugvm:plugvm xmlns:plugvm="
                        "'https://plugvm.dev/xmlns/domain/1'><plugvm:qmp path='none'/>"
                        "</plugvm:plugvm></metadata>")


@pytest.mark.parametrize("text,flags,message", [
    (QMP_NONE, ["-S"], r"-S with --qmp none: nothing could ever send `cont`"),
    (HOTADD, ["--smp", "3,maxcpus=3", "--qmp", "none"],
     r"d\.xml: <vcpus> hot-adds vCPU 2 at start, which --smp 3,maxcpus=3 makes a boot CPU"),
    (HOTADD, ["--smp", "1,maxcpus=2", "--qmp", "none"],
     r"hot-adds vCPU 2 at start, which --smp 1,maxcpus=2 makes a boot CPU or takes away"),
])
def test_the_document_and_the_flags_are_checked_together(tmp_path, text, flags, message):
    # Each part alone is valid; only the whole configuration breaks a rule.
    rc, vm = run_plugvm("--domain", _write(tmp_path, text % GUEST), *flags)
    assert rc == 2, vm.transcript()
    assert vm.lines(message, stream="stderr"), vm.transcript()


def test_serial_file_takes_the_console(tmp_path):
    log = tmp_path / "serial.log"
    doc = (GOOD % GUEST).replace("</os>", f"</os><devices><serial type='file'><source path='"
                                 f"{log}'/></serial></devices>")
    rc, vm = run_plugvm("--domain", _write(tmp_path, doc), "--qmp", "none")
    assert rc == 0, vm.transcript()
    assert "plugvm-guest: 1/1 CPUs online" in log.read_text(), log.read_text()
    assert not vm.lines(r"CPUs online"), vm.transcript()  # not on stdout any more


def _run_measured(path, deadline_s=10.0):
    """Run plugvm on the document at `path`; (status, stderr, seconds, peak RSS in MiB), or
    an assertion once it has run deadline_s without ending. GNU time forks plugvm and
    reports its maxrss: getrusage() of a child this Python process forks itself would count
    Python's own pages, which the child holds until exec."""
    times = path + ".time"
    start = time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", times, PLUGVM, "--domain", path,
                          "--kernel", GUEST, "--qmp", "none", "--append", "halt"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = p.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"still running after {deadline_s} s")
    seconds = time.monotonic() - start
    with open(times) as f:
        max_rss_kib = int(f.read().split()[-1])
    return p.returncode, stderr, seconds, max_rss_kib / 1024


def _doctype(entities, name):
    return (f"<?xml version='1.0'?><!DOCTYPE domain [{entities}]>"
            + GOOD.replace("<name>t</name>", f"<name>{name}</name>") % GUEST)


# Each one was accepted (or refused only after expanding it) before the document was bounded.
HOSTILE = {
    # Billion laughs: 10 levels of 10 references, 10^9 "lol"s.
    "billion-laughs": lambda: _doctype(
        "<!ENTITY l0 'lol'>" + "".join(
            f"<!ENTITY l{i} '{('&l%d;' % (i - 1)) * 10}'>" for i in range(1, 10)), "&l9;"),
    # Quadratic blowup: one 50 kB entity referenced 2,000 times (100 MB), no nesting.
    "quadratic-blowup": lambda: _doctype(f"<!ENTITY a '{'x' * 50_000}'>", "&a;" * 2_000),
    "external-entity": lambda: _doctype("<!ENTITY e SYSTEM 'file:///etc/passwd'>", "&e;"),
    "external-dtd": lambda: (GOOD % GUEST).replace(
        "<domain", "<!DOCTYPE domain SYSTEM 'http://127.0.0.1:9/domain.dtd'><domain", 1),
    "9MB-name": lambda: GOOD.replace("<name>t</name>", f"<name>{'n' * (9 << 20)}</name>")
    % GUEST,
    "252-byte-name": lambda: GOOD.replace("<name>t</name>", f"<name>{'n' * 252}</name>")
    % GUEST,
    "name-with-a-newline": lambda: GOOD.replace("<name>t</name>", "<name>a&#10;b</name>")
    % GUEST,
    "bad-uuid": lambda: GOOD.replace("</name>", f"</name><uuid>{'0' * 5000}</uuid>") % GUEST,
    "long-kernel-path": lambda: GOOD % ("/" + "k" * 5000),
    # libxml2 checks each attribute against the tag's earlier ones: 87,000 took 47 s.
    "one-tag-with-72000-attributes": lambda: (GOOD % GUEST).replace(
        "<name>", "<metadata><o:x xmlns:o='urn:o' " + " ".join(
            f"a{i}=''" for i in range(72_000)) + "/></metadata><name>", 1),
    "100000-comments": lambda: (GOOD % GUEST).replace("<name>", "<!---->" * 100_000 + "<name>"),
}
MESSAGES = {
    "billion-laughs": r"<!DOCTYPE>: refused \(plugvm reads no DTD and expands no entities\)",
    "quadratic-blowup": r"<!DOCTYPE>: refused",
    "external-entity": r"<!DOCTYPE>: refused",
    "external-dtd": r"<!DOCTYPE>: refused",
    "9MB-name": r"larger than the 1024 KiB a domain document may be",
    "252-byte-name": r"<name>: 252 bytes: not a domain name \(1\.\.251 bytes, one line\)",
    "name-with-a-newline": r"<name>: 3 bytes with a newline: not a domain name",
    "bad-uuid": r"<uuid>: not a UUID",
    "long-kernel-path": r"<os><kernel>: 5001 bytes, longer than a file name may be \(4095\)",
    "one-tag-with-72000-attributes": r"d\.xml: a tag with more than 32 attributes$",
    "100000-comments": r"more than 16384 tags: past what a domain document may hold",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_documents_are_refused_in_bounded_time_and_memory(tmp_path, kind):
    path = _write(tmp_path, HOSTILE[kind]())
    status, stderr, seconds, rss_mib = _run_measured(path)
    assert status == 2, (status, stderr)
    assert __import__("re").search(MESSAGES[kind], stderr), stderr
    assert stderr.startswith("plugvm: ") and stderr.count("\n") == 1, stderr
    assert seconds < 2.0 and rss_mib < 64, (seconds, rss_mib, stderr)


def test_a_fifo_as_the_document_is_refused_without_blocking(tmp_path):
    path = str(tmp_path / "d.xml")
    os.mkfifo(path)
    status, stderr, _, _ = _run_measured(path)
    assert status == 2 and f"--domain {path}: not a regular file" in stderr, stderr
