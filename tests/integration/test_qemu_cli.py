# SPDX-License-Identifier: MIT
"""plugvm-qemu: plugvm run with the command lines libvirt 9.0's QEMU driver writes (spec
§9.2, the capabilities probe; §9.3, a domain's start), and the refusals that name the domain
XML element to remove."""
import json
import os
import re
import select
import signal
import socket
import subprocess
import time

import pytest

from qmp import Qmp
from vm import BOOT_TIMEOUT, GUEST, PLUGVM

PLUGVM_QEMU = os.path.join(os.path.dirname(PLUGVM), "plugvm-qemu")


def read_until(fd, pattern, timeout=BOOT_TIMEOUT):
    """Bytes from fd until `pattern` (a regex over the text so far, its CR LF line ends read as
    LF: the guest's console writes CR LF) matches; fails at EOF or after `timeout` seconds."""
    out = b""
    deadline = time.monotonic() + timeout
    while not re.search(pattern, out.decode("utf-8", "replace").replace("\r\n", "\n"), re.M):
        left = deadline - time.monotonic()
        assert left > 0, f"no {pattern!r} within {timeout}s in:\n{out.decode('utf-8', 'replace')}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"EOF before {pattern!r} in:\n{out.decode('utf-8', 'replace')}"
            out += chunk
    return out.decode("utf-8", "replace")


def wait_gone(pid, timeout=30.0):
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(") ")[1].startswith("Z"):
                return
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), f"pid {pid} still runs after {timeout}s"


def probe_args(d):
    """§9.2's probe, word for word but the directory."""
    return ["-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
            "none,accel=kvm:tcg", "-qmp", f"unix:{d}/qmp.monitor,server=on,wait=off",
            "-pidfile", f"{d}/qmp.pid", "-daemonize"]


def test_probe_daemonizes_once_qmp_listens(tmp_path):
    d = str(tmp_path)
    # communicate() returns only at EOF on both pipes: the survivor must hold neither.
    p = subprocess.Popen([PLUGVM_QEMU] + probe_args(d), cwd="/", stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=BOOT_TIMEOUT)
    assert p.returncode == 0, err.decode()
    assert out == b"", out
    assert b"error" not in err, err
    with open(f"{d}/qmp.pid") as f:
        pid = int(f.read().strip())
    try:
        assert pid != p.pid
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[0].endswith(b"plugvm-qemu")
        assert os.stat(f"{d}/qmp.pid").st_mode & 0o777 == 0o644
        assert os.getsid(pid) == pid  # its own session, as QEMU's -daemonize
        # libvirt connects once, without retrying: the socket listens already.
        with Qmp(f"{d}/qmp.monitor") as q:
            assert q.greeting["QMP"]["version"]["qemu"]
            assert q.cmd("query-version")["package"]
            # The rest of libvirt's probe, in its order, on the sandboxed machine-less plugvm:
            # every command answers (a refusal is an answer), none ends the process.
            for name, args in [("query-target", None), ("query-qmp-schema", None),
                               ("query-commands", None), ("query-kvm", None),
                               ("qom-list-types", None),
                               ("device-list-properties", {"typename": "virtio-blk-pci"}),
                               ("qom-list-properties", {"typename": "memory-backend-file"}),
                               ("query-machines", None),
                               ("qom-list-properties", {"typename": "none-machine"}),
                               ("query-tpm-models", None), ("query-command-line-options", None),
                               ("query-migrate-capabilities", None), ("query-status", None)]:
                reply = q.execute(name, args)
                assert "return" in reply or "error" in reply, (name, reply)
            assert q.cmd("query-kvm") == {"enabled": True, "present": True}
            assert q.cmd("query-status")["status"] == "prelaunch"
            q.execute("quit")
        wait_gone(pid)
    finally:  # a failed check leaves no daemon behind
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGKILL)
    assert not os.path.exists(f"{d}/qmp.pid"), "the pidfile outlives the process"
    assert not os.path.exists(f"{d}/qmp.monitor")


def test_probe_that_cannot_listen_fails_in_the_parent(tmp_path):
    d = str(tmp_path / "missing")
    p = subprocess.run([PLUGVM_QEMU] + probe_args(d), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=BOOT_TIMEOUT)
    assert p.returncode == 2, p.stderr.decode()
    assert "qmp.monitor" in p.stderr.decode()
    assert not os.path.exists(f"{d}/qmp.pid")


def start_args(monitor_fd, log_fd):
    """§9.3's start of a direct-kernel domain with JSON -object/-device (QEMU 7.2's schema)."""
    return [
        "-name", "guest=qcli,debug-threads=on", "-S",
        "-object", json.dumps({"qom-type": "secret", "id": "masterKey0", "format": "raw",
                               "file": "/nonexistent/master-key.aes"}),
        "-machine", "pc-i440fx-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram",
        "-accel", "kvm", "-cpu", "host,migratable=on,arch-capabilities=off", "-m", "96",
        "-object", json.dumps({"qom-type": "memory-backend-ram", "id": "pc.ram",
                               "size": 96 << 20}),
        "-overcommit", "mem-lock=off", "-smp", "1,maxcpus=4,sockets=4,cores=1,threads=1",
        "-uuid", "c7a5fdbd-cdaf-9455-926a-d65c16db1809", "-display", "none",
        "-no-user-config", "-nodefaults",
        "-chardev", f"socket,id=charmonitor,fd={monitor_fd},server=on,wait=off",
        "-mon", "chardev=charmonitor,id=monitor,mode=control", "-rtc", "base=utc",
        "-no-shutdown", "-boot", "strict=on", "-kernel", GUEST,
        "-add-fd", f"set=0,fd={log_fd},opaque=serial0-source",
        "-chardev", "file,id=charserial0,path=/dev/fdset/0,append=on",
        "-device", json.dumps({"driver": "isa-serial", "chardev": "charserial0",
                               "id": "serial0", "index": 0}),
        "-audiodev", json.dumps({"id": "audio1", "driver": "none"}),
        "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
        "-msg", "timestamp=on",
    ]


def test_start_serves_qmp_on_the_inherited_socket_and_logs_to_the_fdset(tmp_path):
    sock_path = str(tmp_path / "monitor.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(4)
    r, w = os.pipe()
    p = subprocess.Popen([PLUGVM_QEMU] + start_args(listener.fileno(), w),
                         pass_fds=(listener.fileno(), w), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(w)
    listener.close()
    try:
        with Qmp(sock_path) as q:
            assert not q.cmd("query-status")["running"]
            assert not os.read(r, 1) if select.select([r], [], [], 0)[0] else True
            q.cmd("cont")
            q.wait_event("RESUME", BOOT_TIMEOUT)
            text = read_until(r, r"^plugvm-guest: 1/1 CPUs online$")
            assert "4 possible CPUs, 1 present" in text
            q.execute("quit")
        assert p.wait(timeout=BOOT_TIMEOUT) == 0
        err = p.stderr.read().decode()
        # -msg timestamp=on: plugvm's lines carry QEMU's UTC timestamps.
        for line in filter(None, err.splitlines()):
            assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z plugvm: ", line), err
        assert not os.path.exists(tmp_path / "fd=3")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(r)


def test_pty_console_carries_output_and_typed_input(tmp_path):
    p = subprocess.Popen([PLUGVM_QEMU, "-nodefaults", "-machine", "pc", "-kernel", GUEST,
                          "-chardev", "pty,id=charserial0", "-device",
                          "isa-serial,chardev=charserial0,id=serial0,index=0"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        line = p.stderr.readline().decode()
        m = re.match(r"^plugvm: char device redirected to (/dev/pts/\d+) "
                     r"\(label charserial0\)$", line.rstrip("\n"))
        assert m, line
        slave = os.open(m.group(1), os.O_RDWR | os.O_NOCTTY)
        try:
            read_until(slave, r"^plugvm-guest: 1/1 CPUs online")
            os.write(slave, b"echo hi-from-the-pty\r")
            read_until(slave, r"^hi-from-the-pty$")
        finally:
            os.close(slave)
    finally:
        p.terminate()
        p.wait(timeout=BOOT_TIMEOUT)


@pytest.mark.parametrize("args,element", [
    (["-drive", "file=/tmp/x.img,if=virtio"], "<disk>"),
    (["-netdev", "user,id=net0"], "<interface>"),
    (["-device", "virtio-net-pci,netdev=net0,id=net0"], "<interface>"),
    (["-usb"], "<controller type='usb' model='none'/>"),
    (["-vnc", "127.0.0.1:0"], "<graphics>"),
    (["-device", json.dumps({"driver": "virtio-balloon-pci", "id": "balloon0"})],
     "<memballoon"),
    (["-no-acpi"], "<acpi/>"),
])
def test_refusals_name_the_domain_xml_element(args, element):
    p = subprocess.run([PLUGVM_QEMU, "-kernel", GUEST] + args, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=BOOT_TIMEOUT)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert args[0] in err and element in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_named_descriptor_that_is_not_open_is_refused():
    p = subprocess.run([PLUGVM_QEMU, "-kernel", GUEST, "-add-fd", "set=0,fd=57",
                        "-chardev", "file,id=c,path=/dev/fdset/0", "-device",
                        "isa-serial,chardev=c"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=BOOT_TIMEOUT)
    assert p.returncode == 2
    assert "fd=57: not an open descriptor" in p.stderr.decode()


def test_plugvm_qmp_fd_serves_the_inherited_socket(tmp_path):
    sock_path = str(tmp_path / "q.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(4)
    fd = listener.fileno()
    p = subprocess.Popen([PLUGVM, "--qmp", f"fd={fd}", "-S"], pass_fds=(fd,), cwd=tmp_path,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    listener.close()
    try:
        with Qmp(sock_path) as q:
            assert not q.cmd("query-status")["running"]
            q.execute("quit")
        assert p.wait(timeout=BOOT_TIMEOUT) == 0
        assert os.listdir(tmp_path) == ["q.sock"], os.listdir(tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_refused_start_hands_its_manager_an_eof(tmp_path):
    """A refused command line that names a listening monitor socket (as libvirt's fd=N):
    plugvm-qemu prints the reason, then accepts the manager's connection and closes it, so
    the manager reads an end of file and the reason from the log instead of a refused
    connection whose reason it may never learn (libvirt reports the reason only once the
    exited emulator is reaped; fds.h)."""
    sock_path = str(tmp_path / "monitor.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(4)
    fd = listener.fileno()
    p = subprocess.Popen([PLUGVM_QEMU, "-kernel", GUEST, "-chardev",
                          f"socket,id=charmonitor,fd={fd},server=on,wait=off", "-mon",
                          "chardev=charmonitor,id=monitor,mode=control", "-blockdev",
                          "driver=file,filename=/dev/null,node-name=f"], pass_fds=(fd,),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    listener.close()
    try:
        line = p.stderr.readline().decode()
        assert "-blockdev" in line and "<disk>" in line, line
        # The reason is out: the process has nothing left to do but hand the monitor over.
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(BOOT_TIMEOUT)
        c.connect(sock_path)
        assert c.recv(1) == b""
        c.close()
        assert p.wait(timeout=BOOT_TIMEOUT) == 2
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("append", [False, True])
def test_file_console_appends_only_with_append_on(tmp_path, append):
    log = tmp_path / "serial.log"
    log.write_text("earlier line\n")
    chardev = f"file,id=charserial0,path={log}" + (",append=on" if append else "")
    p = subprocess.run([PLUGVM_QEMU, "-nodefaults", "-kernel", GUEST, "-append", "halt",
                        "-chardev", chardev, "-device", "isa-serial,chardev=charserial0"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=BOOT_TIMEOUT)
    assert p.returncode == 0, p.stderr.decode()
    text = log.read_text()
    assert "plugvm-guest: 1/1 CPUs online" in text, text
    assert text.startswith("earlier line\n") == append, text
    assert p.stdout == b""  # the guest's console is the file, not stdout


def test_nodefaults_without_a_serial_port_discards_the_console():
    p = subprocess.run([PLUGVM_QEMU, "-nodefaults", "-kernel", GUEST, "-append", "halt"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=BOOT_TIMEOUT)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout == b"" and b"plugvm-guest" not in p.stderr


@pytest.mark.parametrize("machine", ["pc-i440fx-7.2", "pc-q35-7.2"])
def test_each_machine_type_boots_on_stdio(machine):
    p = subprocess.run([PLUGVM_QEMU, "-nodefaults", "-machine", f"{machine},usb=off",
                        "-accel", "kvm", "-smp", "2,maxcpus=4", "-kernel", GUEST, "-append",
                        "halt selftest=acpi_cphp", "-serial", "stdio"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=BOOT_TIMEOUT)
    out = p.stdout.decode()
    assert p.returncode == 0, out + p.stderr.decode()
    assert "plugvm-guest: 2/2 CPUs online" in out, out
    assert "selftest acpi_cphp: pass" in out, out
