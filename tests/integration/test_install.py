# SPDX-License-Identifier: MIT
"""`make install` / `make uninstall` with DESTDIR and PREFIX: the installed plugvm boots the
installed guest by default (../lib/plugvm/guest.elf from the binary), plugvm-latency --rt runs
the installed RT guest, plugvm-qemu is a symlink to plugvm beside it, and uninstall leaves no
file behind."""
import os
import subprocess

from vm import BOOT_TIMEOUT, ROOT, Vm

PREFIX = "/usr/local"
PROGRAMS = ["plugvm", "plugctl", "plugvm-latency"]
GUESTS = ["guest.elf", "guest-rt.elf"]


def make(*args):
    r = subprocess.run(["make", "-C", ROOT, *args], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def run(binary, *args, **kw):
    """Run an installed plugvm to completion; return (exit status, Vm)."""
    vm = Vm([binary, *args], **kw)
    try:
        return vm.wait_exit(BOOT_TIMEOUT), vm
    finally:
        vm.kill()


def files_under(top):
    """Every non-directory (files and symlinks) below `top`."""
    found = []
    for d, _, names in os.walk(top):
        found += [os.path.join(d, n) for n in names]
    return sorted(found)


def test_make_install_then_uninstall_under_destdir(tmp_path):
    dest = tmp_path / "root"
    make("install", f"DESTDIR={dest}", f"PREFIX={PREFIX}")
    bindir, libdir = f"{dest}{PREFIX}/bin", f"{dest}{PREFIX}/lib/plugvm"
    want = [f"{bindir}/{p}" for p in PROGRAMS + ["plugvm-qemu"]] + \
        [f"{libdir}/{g}" for g in GUESTS]
    assert files_under(dest) == sorted(want)
    for p in PROGRAMS:
        assert os.access(f"{bindir}/{p}", os.X_OK), p
    # plugvm-qemu: a relative symlink to plugvm in the same directory.
    assert os.readlink(f"{bindir}/plugvm-qemu") == "plugvm"
    # The installed guests are the built ones.
    with open(f"{libdir}/guest.elf", "rb") as a, \
            open(os.path.join(ROOT, "build", "guest.elf"), "rb") as b:
        assert a.read() == b.read()
    with open(f"{libdir}/guest-rt.elf", "rb") as a, \
            open(os.path.join(ROOT, "build", "rt", "guest.elf"), "rb") as b:
        assert a.read() == b.read()

    # The installed plugvm, no --kernel: the installed guest boots and passes a self-test.
    rc, vm = run(f"{bindir}/plugvm", "--qmp", "none", "--append", "selftest=mm",
                 cwd=str(tmp_path))
    assert rc == 0, vm.transcript()
    assert vm.lines(r"^selftest mm: pass$"), vm.transcript()

    # plugvm-latency --rt, installed: plugvm beside it runs the installed RT guest.
    r = subprocess.run([f"{bindir}/plugvm-latency", "--rt", "--duration", "1", "--smp", "1"],
                       capture_output=True, text=True, timeout=10 * BOOT_TIMEOUT,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("T: 0 "), r.stdout

    # Without the installed guest, the error names where plugvm looked first.
    os.unlink(f"{libdir}/guest.elf")
    rc, vm = run(f"{bindir}/plugvm", "--qmp", "none")
    assert rc != 0 and vm.lines(f"{bindir}/guest.elf", stream="stderr"), vm.transcript()

    make("uninstall", f"DESTDIR={dest}", f"PREFIX={PREFIX}")
    assert files_under(dest) == []
    assert not os.path.exists(libdir)
