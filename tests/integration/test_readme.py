# SPDX-License-Identifier: MIT
"""Every command in README.md's code blocks, run as written from the top of the tree (the
way `make run` is run), so that the README cannot drift from what plugvm does.

The README is parsed here: a command the test does not know, or one it knows that is gone
from the README, fails the test. A few are not run, each for the reason given in SKIPPED.
The plugctl commands of README's table (not a code block) are test_plugctl.py's.
"""
import json
import os
import re
import shlex
import subprocess

import pytest

from qmp import wait_socket
from vm import BOOT_TIMEOUT, PLUGVM, ROOT, Vm, run_plugvm

README = os.path.join(ROOT, "README.md")

# Not run here, and why. Everything else in a README code block runs below.
SKIPPED = {
    "make run": "test_boot.py::test_make_run_as_readme_says runs it exactly",
    "make test": "it is this test suite (and the unit tests)",
    "make test-quick": "it is this test suite's part not marked slow (and the unit tests)",
    "build/plugvm [options]": "the synopsis, not a command",
    'build/plugvm --smp 8 -m 128M --append "selftest=all"':
        "selftest=all at 8 CPUs takes about a minute here; test_sched.py runs it at 8 CPUs "
        "and test_boot.py at 1, 2 and 4",
    'scripts/run-qemu.sh -smp 4 --append "selftest=all"':
        "QEMU's firmware and selftest=all take minutes here; test_qemu.py runs "
        "scripts/run-qemu.sh",
    "virsh console plugvm-libvirt-pc":
        "interactive; test_libvirt_plugvm.py::test_virsh_console_is_a_terminal drives `virsh "
        "console` on a pty",
    "scripts/run-qemu.sh --machine q35 -smp 1,maxcpus=4 --qmp /tmp/q.sock":
        "a QEMU q35 VM that stays up for QMP; test_acpi_machines.py runs scripts/run-qemu.sh "
        "--machine q35 (and microvm) with a QMP socket and hot-adds through it",
}

# The QMP example's socket: README says /tmp/vm.qmp; the test uses a private path instead,
# as other runs of this suite may share the machine's /tmp.
README_SOCKET = "/tmp/vm.qmp"


def code_blocks():
    """README's code blocks, a command continued with a trailing backslash as one line."""
    with open(README) as f:
        blocks = re.findall(r"^```[a-z]*\n(.*?)^```", f.read(), re.S | re.M)
    return [re.sub(r"\\\n\s*", " ", b) for b in blocks]


# What a command line in a code block starts with (other lines: JSON, file listings).
PROGRAMS = re.compile(r"^(build/\S+|scripts/\S+\.sh|make|socat|sudo|virsh|qemu-\S+)$")


def command(line):
    """A code line that runs something, without its trailing comment; else None."""
    words = line.split()
    if not words or not PROGRAMS.match(words[0]):
        return None
    return " ".join(shlex.quote(w) if " " in w else w
                    for w in shlex.split(line, comments=True)) or None


def readme_commands():
    return [c for b in code_blocks() for c in map(command, b.splitlines()) if c]


def qmp_requests():
    """The JSON requests of README's code blocks, in order (some span two lines)."""
    reqs, dec = [], json.JSONDecoder()
    for b in code_blocks():
        text = "\n".join(l for l in b.splitlines() if not command(l))
        if not text.lstrip().startswith("{"):
            continue  # not a block of QMP requests
        i = 0
        while True:
            i = text.find("{", i)
            if i < 0:
                break
            obj, i = dec.raw_decode(text, i)
            reqs.append(obj)
    return reqs


def normalise(cmd):
    # shlex.quote keeps the README's quotes out: compare the words, not the quoting.
    return shlex.split(cmd)


def test_every_readme_command_is_known():
    """A README example added, changed or removed makes this fail until the test follows."""
    found = {tuple(normalise(c)) for c in readme_commands()}
    known = {tuple(normalise(c))
             for c in list(SKIPPED) + RUN + QMP_BLOCK + LATENCY_RUN + LIBVIRT_RUN}
    assert found == known, (f"in README, not in this test: {sorted(found - known)}; "
                            f"in this test, not in README: {sorted(known - found)}")


# README's libvirt section, run in order by test_libvirt_plugvm.py::test_readme_libvirt_section
# (with libvirt's daemons, in a bash shell from the top of the tree).
LIBVIRT_RUN = [
    "scripts/libvirt-setup.sh start",
    "virsh domcapabilities --emulatorbin $PWD/build/plugvm-qemu --virttype kvm",
    "scripts/libvirt-domain.sh configs/libvirt/plugvm-libvirt-pc.xml > /tmp/plugvm-pc.xml",
    "virsh create /tmp/plugvm-pc.xml",
    "virsh setvcpus plugvm-libvirt-pc 4 --live",
    "virsh shutdown plugvm-libvirt-pc",
]


# Run to completion; each boots with `halt` or self-tests that end.
RUN = [
    "build/plugvm --smp 2,maxcpus=8 --append halt",
    'build/plugvm --smp 64 --append "selftest=percpu,apic"',
    "build/plugvm --smp 4,maxcpus=8 --chaos --append halt",
    "build/plugvm --smp 4 --chaos=seed=42,stall=50%:10ms,irq=off --append halt",
    'build/plugvm --smp 4 --append '
    '"selftest=cpuhp_states,cpuhp_walk,cpuhp_fail,cpuhp_cycle,cpuhp_parallel"',
    'build/plugvm --smp 4 --append "cpuhp.trace halt"',
]


@pytest.mark.parametrize("cmd", RUN)
@pytest.mark.slow
def test_readme_example_runs(cmd):
    argv = normalise(cmd)
    assert argv[0] == "build/plugvm"
    rc, vm = run_plugvm(*argv[1:], timeout=3 * BOOT_TIMEOUT, cwd=ROOT)
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^plugvm-guest: \d+/\d+ CPUs online$"), vm.transcript()
    assert not vm.lines(r"selftest \S+: fail"), vm.transcript()
    assert not vm.lines(r"warning", "stderr"), vm.transcript()


# The latency tool's examples, in order (the third compares with the second's JSON), each as
# written, from a scratch directory for the files they write.
LATENCY_RUN = [
    "build/plugvm-latency --smp 2,maxcpus=4 --duration 6 --interval 1000 --churn 200 "
    "--histogram H --plot P.png",
    "build/plugvm-latency --rt --stress hogs,timers,ipi,locks --json rt.json --compare-host",
    "build/plugvm-latency --stress hogs,timers --plot both.png --compare rt.json",
]


@pytest.mark.slow
def test_readme_latency_examples_run(tmp_path):
    for cmd, made in zip(LATENCY_RUN, (["H", "P.png"], ["rt.json"], ["both.png"])):
        argv = normalise(cmd)
        argv[0] = os.path.join(ROOT, argv[0])
        p = subprocess.run(argv + ["--plugvm", PLUGVM], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, (cmd, p.stdout, p.stderr)
        assert re.search(r"^T: 0 ", p.stdout, re.M), (cmd, p.stdout)
        for f in made:
            assert (tmp_path / f).stat().st_size > 0, (cmd, f)


# The QMP section: the VM in the background, then socat with the requests "typed" (here
# piped, half-closing at the end: every one must still be answered).
QMP_BLOCK = [
    f"build/plugvm --smp 2,maxcpus=8 --qmp unix:{README_SOCKET} &",
    f"socat - UNIX-CONNECT:{README_SOCKET}",
]


def test_readme_qmp_session(tmp_path):
    sock = str(tmp_path / "vm.qmp")
    argv = normalise(QMP_BLOCK[0].replace(README_SOCKET, sock))
    assert argv[0] == "build/plugvm" and argv[-1] == "&"
    reqs = qmp_requests()
    names = [r["execute"] for r in reqs]
    assert names == ["qmp_capabilities", "query-hotpluggable-cpus", "quit", "device_add",
                     "device_del"], names
    # The hot-add example's requests go before quit: one session for the whole section.
    reqs = reqs[:2] + reqs[3:] + reqs[2:3]
    vm = Vm([PLUGVM, *argv[1:-1]], cwd=ROOT)  # build/plugvm, or PLUGVM_BIN's (make check)
    with vm:
        # device_del needs the guest's hotplug driver (docs/qmp.md): wait until it listens.
        vm.wait_for(r"^acpi-hotplug: ready")
        wait_socket(sock)
        socat = normalise(QMP_BLOCK[1].replace(README_SOCKET, sock))
        out = subprocess.run(socat, input="".join(json.dumps(r) + "\n" for r in reqs),
                             capture_output=True, text=True, timeout=BOOT_TIMEOUT, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        msgs = [json.loads(l) for l in out.stdout.splitlines()]
        replies = [m for m in msgs[1:] if "event" not in m]
        assert "QMP" in msgs[0], out.stdout
        assert len(replies) == len(reqs), out.stdout
        assert all("return" in r for r in replies), out.stdout
        cpus = replies[1]["return"]
        assert len(cpus) == 8 and sum("qom-path" in c for c in cpus) == 2, cpus
        assert vm.wait_exit() == 0, vm.transcript()
    assert not os.path.exists(sock)
