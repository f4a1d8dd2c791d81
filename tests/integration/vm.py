# SPDX-License-Identifier: MIT
"""Run a VM process (plugvm or QEMU) and watch its console.

A reader thread per stream collects lines; tests wait for regular expressions with
deadlines (never for fixed times) and for the exit status. Every wait has a hard bound, so
a hung VM fails the test instead of hanging it.
"""
import contextlib
import os
import re
import signal
import stat
import subprocess
import threading
import time

from qmp import Qmp, wait_socket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGVM = os.environ.get("PLUGVM_BIN", os.path.join(ROOT, "build", "plugvm"))
GUEST = os.environ.get("PLUGVM_GUEST", os.path.join(ROOT, "build", "guest.elf"))
GUEST_RT = os.environ.get("PLUGVM_GUEST_RT", os.path.join(ROOT, "build", "rt", "guest.elf"))
GUESTS = {"mainline": GUEST, "rt": GUEST_RT}
RUN_QEMU = os.path.join(ROOT, "scripts", "run-qemu.sh")



def kvm_module():
    """The KVM module serving /dev/kvm: kvm_pvm, kvm_intel or kvm_amd (KVM takes one
    vendor module at a time), else "kvm". kvm_pvm emulates the guest's kernel code; on
    kvm_amd (AMD SVM) a triple fault leaves no guest state to dump."""
    return next((m for m in ("kvm_pvm", "kvm_intel", "kvm_amd")
                 if os.path.isdir(f"/sys/module/{m}")), "kvm")


# Guest kernel code is emulated on kvm_pvm hosts (~3000x slower than hardware): be generous.
BOOT_TIMEOUT = float(os.environ.get("PLUGVM_TEST_TIMEOUT", "90"))
QEMU_TIMEOUT = 2 * BOOT_TIMEOUT


class VmFailure(AssertionError):
    pass


class Vm:
    """A running VM process whose stdout/stderr lines are collected as they arrive."""

    def __init__(self, argv, env=None, stdin=subprocess.DEVNULL, preexec_fn=None, cwd=None):
        self.argv = list(argv)
        self.env = env
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, preexec_fn=preexec_fn, cwd=cwd)
        self.stdout = []
        self.stderr = []
        # The bytes of each stdout line as they came, line end included (the guest's "\r\n").
        self.stdout_raw = []
        self._cond = threading.Condition()
        self.backtraces = ""
        self._bug_seen = 0
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout,
                                                      self.stdout_raw), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr, None),
                             daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self, stream, lines, raw_lines):
        for raw in iter(stream.readline, b""):
            with self._cond:
                if raw_lines is not None:
                    raw_lines.append(raw)
                lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def transcript(self):
        with self._cond:
            out = "\n".join(self.stdout[-200:])
            err = "\n".join(self.stderr[-100:])
        bt = f"\n--- backtraces ---\n{self.backtraces}" if self.backtraces else ""
        return (f"command: {' '.join(self.argv)}\n--- stdout ---\n{out}\n--- stderr ---\n{err}"
                + bt)

    def wait_until(self, done, what, timeout=BOOT_TIMEOUT):
        """Wait until `done()` returns something other than None and return it: `done` is
        called with the lines' lock held, at once and again as each line of either stream
        arrives. A kernel bug report, the VM's exit or `timeout` fail the wait (`what` names
        what was awaited)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                # A kernel bug report ends the wait at once: the guest said what is wrong.
                if any(self.BUG_LINE.match(l) for l in self.stdout[self._bug_seen:]):
                    raise VmFailure(f"the guest reported a kernel bug while we waited for "
                                    f"{what}\n" + "\n".join(self.bugs()[:20]) + "\n"
                                    + self.transcript())
                self._bug_seen = len(self.stdout)
                result = done()
                if result is not None:
                    return result
                if self.proc.poll() is not None and all(not t.is_alive() for t in self._readers):
                    raise VmFailure(f"exited ({self.proc.returncode}) before {what}\n"
                                    + self.transcript())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VmFailure(f"timed out after {timeout}s waiting for {what}\n"
                                    + self.transcript())
                self._cond.wait(min(left, 0.5))

    def wait_for(self, pattern, timeout=BOOT_TIMEOUT, stream="stdout"):
        """Wait until a line of `stream` matches `pattern` (re.search); return the match."""
        rx = re.compile(pattern)
        lines = self.stdout if stream == "stdout" else self.stderr
        seen = 0

        def found():
            nonlocal seen
            while seen < len(lines):
                m = rx.search(lines[seen])
                seen += 1
                if m:
                    return m
            return None
        return self.wait_until(found, f"/{pattern}/", timeout)

    def wait_count(self, pattern, n, timeout=BOOT_TIMEOUT, stream="stdout"):
        """Wait until `n` lines of `stream` match `pattern` (a line said again counts
        again: a guest that boots twice, a CPU added twice); return every match so far."""
        rx = re.compile(pattern)
        lines = self.stdout if stream == "stdout" else self.stderr

        def enough():
            said = [m for m in map(rx.search, lines) if m]
            return said if len(said) >= n else None
        return self.wait_until(enough, f"{n}x /{pattern}/", timeout)

    def wait_exit(self, timeout=BOOT_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            try:
                rc = self.proc.wait(min(1.0, max(0.0, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if self.bugs():
                    # Give the guest's dump (threads, timer queues) a moment to arrive.
                    time.sleep(2)
                    self.kill()
                    self.assert_no_bugs()
                if time.monotonic() < deadline:
                    continue
                self.post_mortem()
                self.kill()
                raise VmFailure(f"did not exit within {timeout}s\n" + self.transcript())
        for t in self._readers:
            t.join(10)
        self.assert_no_bugs()
        return rc

    # A kernel bug report the guest did not announce as provoked on purpose: "BUG: ..." and
    # the lock validator's "lockdep: ..." (provoked ones say "expected BUG:" / "expected
    # lockdep:"). Any of them fails the test that ran the guest, whatever else it checks.
    BUG_LINE = re.compile(r"^(BUG: |lockdep: )")

    def bugs(self):
        with self._cond:
            return [l for l in self.stdout if self.BUG_LINE.match(l)]

    def assert_no_bugs(self):
        bugs = self.bugs()
        if bugs:
            raise VmFailure("the guest reported a kernel bug:\n" + "\n".join(bugs[:20])
                            + "\n" + self.transcript())

    def post_mortem(self):
        """Ask a hung plugvm for its vCPU registers (SIGQUIT), for the failure report; a
        guest whose console input we hold is first asked for its threads (console monitor:
        every thread's state and a sleeping one's backtrace), and every guest for its CPUs'
        NMI report (QMP inject-nmi), which needs no guest interrupt to work."""
        if self.proc.poll() is not None or os.path.basename(self.argv[0]) != "plugvm":
            return
        self.nmi_report()
        if self.proc.stdin:
            try:
                self.proc.stdin.write(b"threads\n")
                self.proc.stdin.flush()
                time.sleep(3)
            except OSError:
                pass
        self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            return
        for t in self._readers:
            t.join(5)
        self.backtraces = self._symbolize()

    def _symbolize(self):
        """The post-mortem's backtraces as function names (addr2line), one line per vCPU."""
        kernel = (self.argv[self.argv.index("--kernel") + 1] if "--kernel" in self.argv
                  else os.path.join(os.path.dirname(self.argv[0]), "guest.elf"))
        out = []
        with self._cond:
            traces = [l for l in self.stderr if "backtrace:" in l or "registers:" in l]
            # The guest's thread dump (console monitor `threads`): "thread NAME: ...: PCs".
            threads = [l for l in self.stdout if re.match(r"^thread .*:( [0-9a-f]+)+$", l)]
        vcpu = "?"
        for line in traces + threads:
            if "registers:" in line:
                vcpu = line.split("vCPU")[1].split()[0]
                continue
            if line.startswith("thread "):
                who, pcs = line.rsplit(":", 1)
                addrs = [f"{int(a, 16) - 1:x}" for a in pcs.split()]
                vcpu = None
            else:
                addrs = line.split("backtrace:")[1].split()
                # Return addresses point after their call: look up the call itself.
                addrs = addrs[:1] + [f"{int(a, 16) - 1:x}" for a in addrs[1:]]
            names = addrs
            if kernel:
                try:
                    r = subprocess.run(["addr2line", "-f", "-s", "-e", kernel] + addrs,
                                       capture_output=True, text=True, timeout=10)
                    fl = r.stdout.split("\n")
                    names = [f"{fl[2 * i]}({fl[2 * i + 1]})" for i in range(len(addrs))]
                except (OSError, subprocess.SubprocessError, IndexError):
                    pass
            out.append((f"vCPU {vcpu}: " if vcpu else who.split(":")[0] + ": ")
                       + " <- ".join(names))
        return "\n".join(out)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            self._remove_sockets()

    def _qmp_paths(self):
        """Where this plugvm's QMP socket may be: --qmp's path, else the default one."""
        env = self.env if self.env is not None else os.environ
        paths = [f"{env.get('XDG_RUNTIME_DIR') or '/tmp'}/plugvm-{self.proc.pid}.qmp"]
        for i, a in enumerate(self.argv[:-1]):
            if a in ("--qmp", "-qmp"):
                v = self.argv[i + 1]
                paths.insert(0, (v[5:] if v.startswith("unix:") else v).split(",")[0])
        return paths

    NMI_REPORT_LINE = re.compile(r"^nmi: cpu \d+: rq: ")

    def nmi_report(self, timeout=10.0):
        """Have a hung plugvm's guest print every CPU's interrupt and timer state (QMP
        inject-nmi; the guest's NMI report, docs/reliability.md) and wait for it, bounded.
        Returns the number of CPUs that reported."""
        from qmp import Qmp, QmpError  # a sibling module; vm.py is imported without it too
        with self._cond:
            start = len(self.stdout)
        for path in self._qmp_paths():
            try:
                with Qmp(path, timeout=5.0) as q:
                    q.cmd("inject-nmi")
                break
            except (OSError, EOFError, QmpError, ValueError):
                continue
        else:
            return 0
        deadline, seen, last = time.monotonic() + timeout, 0, -1
        while time.monotonic() < deadline and seen != last:
            last = seen
            time.sleep(2)  # each CPU's report follows the one before it
            with self._cond:
                seen = sum(1 for l in self.stdout[start:] if self.NMI_REPORT_LINE.match(l))
        return seen

    def _remove_sockets(self):
        """A VM ended by SIGKILL leaves its QMP socket: remove it, as a supervisor would."""
        for p in self._qmp_paths():
            try:
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    os.unlink(p)
            except OSError:
                pass

    def lines(self, pattern, stream="stdout"):
        rx = re.compile(pattern)
        with self._cond:
            return [m for m in (rx.search(l) for l in (self.stdout if stream == "stdout"
                                                         else self.stderr)) if m]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.kill()
        for t in self._readers:
            t.join(10)
        if exc_type is None:
            self.assert_no_bugs()
        elif not isinstance(exc, VmFailure):
            # The test failed on something else (a QMP error, an assertion): show the VM's
            # side too (pytest prints captured output of a failed test).
            print(f"--- the VM when the test failed ---\n{self.transcript()}")


def plugvm(*args, **kw):
    """Start plugvm with `args` (strings)."""
    return Vm([PLUGVM, *args], **kw)


@contextlib.contextmanager
def paused_with_qmp(tmp_path, *args, qmp_timeout=30.0):
    """Start plugvm -S with `args` and a QMP socket in tmp_path, connect, then `cont`: the
    client is there before the guest runs, so it sees every event. Yields (Vm, Qmp)."""
    path = str(tmp_path / "qmp.sock")
    with plugvm("-S", "--qmp", path, *args) as vm:
        wait_socket(path)
        with Qmp(path, timeout=qmp_timeout) as q:
            q.cmd("cont")
            yield vm, q


def run_plugvm(*args, timeout=BOOT_TIMEOUT, **kw):
    """Run plugvm to completion; return (exit status, Vm)."""
    vm = plugvm(*args, **kw)
    try:
        return vm.wait_exit(timeout), vm
    finally:
        vm.kill()


@contextlib.contextmanager
def ready_with_qmp(tmp_path, *args, ready, timeout=BOOT_TIMEOUT):
    """Start plugvm with `args` and a QMP socket in tmp_path, wait for the console line
    `ready` (a regular expression) within `timeout`, then connect. Yields (Vm, Qmp)."""
    path = str(tmp_path / "qmp.sock")
    with plugvm("--qmp", path, *args) as vm:
        vm.wait_for(ready, timeout)
        wait_socket(path)
        with Qmp(path) as q:
            yield vm, q


def run_watchdog_selftest(build):
    """Run the `build` guest's selftest=watchdog on 2 CPUs (it provokes each kind of hang
    report on purpose) to a clean exit; return the Vm."""
    rc, vm = run_plugvm("--kernel", GUESTS[build], "--smp", "2", "--append", "selftest=watchdog",
                        timeout=3 * BOOT_TIMEOUT)
    assert rc == 0, vm.transcript()
    return vm


def qemu(*args, **kw):
    """Start the guest on QEMU through scripts/run-qemu.sh."""
    return Vm([RUN_QEMU, "--kernel", GUEST, *args], **kw)


def selftests(vm):
    """{name: 'pass' | 'fail <reason>'} from the guest's selftest lines."""
    results = {}
    for m in vm.lines(r"^selftest (\S+): (pass|fail.*)$"):
        results[m.group(1)] = m.group(2)
    return results


def run_selftests(names, *args, build="mainline", append="", timeout=BOOT_TIMEOUT):
    """Boot the `build` guest with plugvm `args` and `selftest=NAMES APPEND`; fail unless it
    powers off with 0 and every named self-test passed. Returns the Vm."""
    rc, vm = run_plugvm("--kernel", GUESTS[build], *args, "--append",
                        " ".join(["selftest=" + ",".join(names), append]).strip(),
                        timeout=timeout)
    assert rc == 0, vm.transcript()
    assert selftests(vm) == {t: "pass" for t in names}, vm.transcript()
    return vm


def exit_status_for_signal(sig):
    return 128 + int(sig)


__all__ = ["Vm", "VmFailure", "plugvm", "run_plugvm", "run_selftests", "qemu", "selftests",
           "PLUGVM", "GUEST",
           "GUEST_RT", "GUESTS",
           "ROOT", "BOOT_TIMEOUT", "QEMU_TIMEOUT", "exit_status_for_signal", "signal"]
