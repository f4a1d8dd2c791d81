# SPDX-License-Identifier: MIT
"""What libvirt 9.0's QEMU driver does with a running domain, replayed against plain
plugvm's QMP in the order libvirt sends it (specs §9.3, §9.4): the start sequence up to
`cont`, setvcpus up, down and up again through the removed slots, a libvirtd restart on a
second connection, suspend/resume; and the actions: -no-shutdown's power-off that stays,
libvirt's fake reboot (system_reset + cont), the guest's reset request under each reboot
action."""
import os
import signal

import pytest

from elfgen import PT_LOAD, PT_NOTE, elf64, pvh_note
from qmp import Qmp, QmpError, wait_socket
from vm import BOOT_TIMEOUT, plugvm

BOOT_LINE = r"^plugvm-guest: \d+/\d+ CPUs online$"
# libvirt gives a removal 5 s before "vcpu unplug request timed out" (specs §9.4).
LIBVIRT_UNPLUG_S = 5.0


def start_paused(tmp_path, *args, sock="qmp.sock"):
    path = str(tmp_path / sock)
    vm = plugvm("-S", "--qmp", path, *args)
    wait_socket(path)
    return vm, path


def tasks(vm):
    return {int(t) for t in os.listdir(f"/proc/{vm.proc.pid}/task")}


def check_cpus(q, vm, present):
    """Both CPU queries as libvirt reads them: `present` maps cpu-index to the qom-path
    expected; every slot is listed once with vcpus-count 1 (they add up to maxcpus), a
    qom-path only when plugged, and query-cpus-fast's equal to it, with a real thread."""
    hot = q.cmd("query-hotpluggable-cpus")
    fast = q.cmd("query-cpus-fast")
    assert sum(c["vcpus-count"] for c in hot) == 4, hot
    assert all(c["type"] == hot[0]["type"] and c["type"].endswith("-x86_64-cpu") for c in hot)
    assert all(set(c["props"]) == {"socket-id", "core-id", "thread-id"} for c in hot), hot
    paths = {c["qom-path"] for c in hot if "qom-path" in c}
    assert paths == set(present.values()), hot
    assert {c["cpu-index"]: c["qom-path"] for c in fast} == present, fast
    threads = tasks(vm)
    for c in fast:
        assert c["thread-id"] != 0 and c["thread-id"] in threads, (c, threads)
        assert c["target"] == "x86_64"
        slot = next(h for h in hot if h.get("qom-path") == c["qom-path"])
        assert c["props"] == slot["props"]
    assert len({c["thread-id"] for c in fast}) == len(fast)
    return hot


def libvirt_start(q):
    """§9.3: what libvirt sends between qmp_capabilities and cont, each answered as it
    needs; then cont and RESUME. Returns query-hotpluggable-cpus' answer."""
    assert q.cmd("query-migrate-capabilities") == [{"capability": "events", "state": False}]
    assert q.cmd("migrate-set-capabilities",
                 {"capabilities": [{"capability": "events", "state": True}]}) == {}
    chardevs = q.cmd("query-chardev")
    assert chardevs and all(c["label"] and c["filename"] for c in chardevs), chardevs
    hot = q.cmd("query-hotpluggable-cpus")
    fast = q.cmd("query-cpus-fast")
    assert len(hot) == 4 and len(fast) == 1
    with pytest.raises(QmpError) as e:
        q.cmd("qom-list", {"path": "/machine/unattached/device[0]"})
    assert e.value.error_class == "DeviceNotFound"
    assert q.cmd("query-named-block-nodes", {"flat": True}) == []
    assert q.cmd("qom-list", {"path": "/machine/peripheral"}) == [
        {"name": "type", "type": "string"}]
    assert q.cmd("query-block") == []
    assert q.cmd("query-status")["status"] == "prelaunch"
    assert q.cmd("cont") == {}
    q.wait_event("RESUME")
    return hot


def setvcpus_up(q, vm, hot, ids, seen):
    """libvirt's setvcpus up: device_add per vCPU with the slot's props; the guest brings
    each up (its _OST names the device), then both queries show it."""
    for n in ids:
        slot = hot[len(hot) - 1 - n]  # listed highest first, as QEMU's
        q.cmd("device_add", {"driver": slot["type"], "id": f"vcpu{n}", **slot["props"]})
    for n in ids:
        seen[n] = seen.get(n, 0) + 1
        vm.wait_count(rf"^acpi-hotplug: slot {n}: cpu \d+ online \(0\)$", seen[n])
    assert osts(q, 1, ids) == {f"vcpu{n}": {"device": f"vcpu{n}", "slot": str(n),
                                            "slot-type": "CPU", "source": 1, "status": 0}
                               for n in ids}


def osts(q, source, ids):
    """The ACPI_DEVICE_OST infos of `source` (1 insert, 3 eject) for vcpuN, N in `ids`,
    by device (QEMU's ACPIOSTInfo names it)."""
    got = {}
    while len(got) < len(ids):
        info = q.wait_event("ACPI_DEVICE_OST", timeout=BOOT_TIMEOUT)["data"]["info"]
        if info["source"] == source:
            got[info["device"]] = info
    return got


def setvcpus_down(q, ids):
    """Highest first: device_del, then DEVICE_DELETED within libvirt's 5 s."""
    for n in sorted(ids, reverse=True):
        assert q.cmd("device_del", {"id": f"vcpu{n}"}) == {}
        while True:
            ev = q.wait_event("DEVICE_DELETED", timeout=LIBVIRT_UNPLUG_S)
            if ev["data"].get("device") == f"vcpu{n}":
                break
        assert ev["data"] == {"device": f"vcpu{n}", "path": f"/machine/peripheral/vcpu{n}"}
        # The guest's _OST before its eject named the device too.
        assert osts(q, 3, [n]) == {f"vcpu{n}": {"device": f"vcpu{n}", "slot": str(n),
                                                "slot-type": "CPU", "source": 3, "status": 0}}


# plugvm's own -smp (cores first, as QEMU >= 6.2) and the one libvirt writes for
# <vcpu current='1'>4</vcpu> without <topology>: the slots then differ by socket-id.
@pytest.mark.parametrize("smp", ["1,maxcpus=4", "1,maxcpus=4,sockets=4,cores=1,threads=1"])
def test_libvirt_start_setvcpus_restart_and_suspend(tmp_path, smp):
    vm, path = start_paused(tmp_path, "--smp", smp)
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        hot = libvirt_start(q)
        vm.wait_for(BOOT_LINE)
        boot = {0: "/machine/unattached/device[0]"}
        check_cpus(q, vm, boot)

        seen = {}
        setvcpus_up(q, vm, hot, [1, 2, 3], seen)
        added = {**boot, **{n: f"/machine/peripheral/vcpu{n}" for n in (1, 2, 3)}}
        check_cpus(q, vm, added)
        assert q.cmd("qom-list", {"path": "/machine/peripheral"}) == [
            {"name": "type", "type": "string"},
            *({"name": f"vcpu{n}", "type": f"child<{hot[0]['type']}>"} for n in (1, 2, 3))]

        setvcpus_down(q, [1, 2, 3])
        check_cpus(q, vm, boot)
        setvcpus_up(q, vm, hot, [1, 2, 3], seen)  # through the slots just emptied
        check_cpus(q, vm, added)

        # A libvirtd restart: a new connection, greeted, and what libvirt asks then.
        with Qmp(path, timeout=BOOT_TIMEOUT) as q2:
            assert "QMP" in q2.greeting
            assert q2.cmd("query-migrate-capabilities") == [
                {"capability": "events", "state": True}]
            assert q2.cmd("query-status")["status"] == "running"
            check_cpus(q2, vm, added)
            assert q2.cmd("query-block") == []
            assert q2.cmd("query-chardev") == q.cmd("query-chardev")
            assert q2.cmd("query-jobs") == []
            assert [p["name"] for p in q2.cmd("qom-list", {"path": "/machine/peripheral"})] \
                == ["type", "vcpu1", "vcpu2", "vcpu3"]
            setvcpus_down(q2, [3])
            check_cpus(q2, vm, {n: p for n, p in added.items() if n != 3})

        # suspend / resume
        assert q.cmd("stop") == {}
        q.wait_event("STOP")
        assert q.cmd("query-status")["status"] == "paused"
        assert q.cmd("cont") == {}
        q.wait_event("RESUME")
        assert q.cmd("query-status")["status"] == "running"
        q.cmd("quit")
        assert vm.wait_exit() == 0


def test_plain_plugvm_chardevs_are_its_socket_and_console(tmp_path):
    vm, path = start_paused(tmp_path)
    with vm, Qmp(path) as q:
        assert q.cmd("query-chardev") == [
            {"label": "compat_monitor0", "filename": f"unix:{path},server=on",
             "frontend-open": True},
            {"label": "serial0", "filename": "stdio", "frontend-open": True}]
        q.cmd("quit")
        assert vm.wait_exit() == 0


def test_no_shutdown_power_off_stays_and_fake_reboot_boots_again(tmp_path):
    # virsh shutdown under -no-shutdown, then virsh reboot's fake reboot.
    vm, path = start_paused(tmp_path, "-no-shutdown")
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        q.cmd("cont")
        vm.wait_for(BOOT_LINE)
        assert q.cmd("system_powerdown") == {}
        q.wait_event("POWERDOWN")
        assert q.wait_event("SHUTDOWN", timeout=BOOT_TIMEOUT)["data"] == {
            "guest": True, "reason": "guest-shutdown"}
        q.wait_event("STOP")
        assert vm.proc.poll() is None
        assert q.cmd("query-status") == {"status": "shutdown", "singlestep": False,
                                         "running": False}
        with pytest.raises(QmpError) as e:
            q.cmd("cont")
        assert "Resetting the Virtual Machine is required" in e.value.desc
        assert q.cmd("system_reset") == {}
        assert q.wait_event("RESET")["data"] == {"guest": False,
                                                  "reason": "host-qmp-system-reset"}
        assert q.cmd("query-status")["status"] == "prelaunch"
        assert q.cmd("cont") == {}
        q.wait_event("RESUME")
        vm.wait_count(BOOT_LINE, 2)
        assert q.cmd("query-status")["status"] == "running"
        q.cmd("quit")
        assert q.wait_event("SHUTDOWN")["data"] == {"guest": False, "reason": "host-qmp-quit"}
        assert vm.wait_exit() == 0


def test_no_shutdown_guest_power_off_then_sigterm_exits_0(tmp_path):
    # libvirt SIGTERMs at once after SHUTDOWN; the guest had powered off: status 0.
    vm, path = start_paused(tmp_path, "--no-shutdown", "--append", "halt")
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        q.cmd("cont")
        assert q.wait_event("SHUTDOWN", timeout=BOOT_TIMEOUT)["data"] == {
            "guest": True, "reason": "guest-shutdown"}
        q.wait_event("STOP")
        assert q.cmd("query-status")["status"] == "shutdown"
        vm.signal(signal.SIGTERM)
        assert q.wait_event("SHUTDOWN")["data"] == {"guest": False, "reason": "host-signal"}
        assert vm.wait_exit() == 0
        # Its vCPUs stopped at the power-off: the guest never saw it fail.
        assert not vm.lines("power-off failed"), vm.transcript()


def reset_kernel(tmp_path, code):
    """A kernel of `code` at its PVH entry (32-bit protected mode, flat segments)."""
    kernel = tmp_path / "reset.elf"
    kernel.write_bytes(elf64([(PT_LOAD, 0x100000, code, 0x1000, 5),
                              (PT_NOTE, 0, pvh_note(0x100000), 20, 4)]))
    return str(kernel)


# 'R' and a newline to COM1, then 6 (RST_CPU | SYS_RST) to the reset control register.
RESET_CODE = (b"\x66\xba\xf8\x03" b"\xb0R\xee" b"\xb0\n\xee"
              b"\x66\xba\xf9\x0c" b"\xb0\x06\xee" b"\xf4\xeb\xfd")
UD2_CODE = b"\x0f\x0b"  # no IDT: a triple fault


def test_guest_reset_request_follows_the_reboot_action(tmp_path):
    vm, path = start_paused(tmp_path, "--virtio", "off", "-m", "4M", "--kernel",
                            reset_kernel(tmp_path, RESET_CODE))
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        assert q.cmd("set-action", {"reboot": "reset"}) == {}
        q.cmd("cont")
        for _ in range(3):
            assert q.wait_event("RESET", timeout=BOOT_TIMEOUT)["data"] == {
                "guest": True, "reason": "guest-reset"}
        vm.wait_count(r"^R$", 3)
        # -no-reboot's action, at run time: the next request ends the VM.
        assert q.cmd("set-action", {"reboot": "shutdown"}) == {}
        ev = q.wait_event("SHUTDOWN", timeout=BOOT_TIMEOUT)
        assert ev["data"] == {"guest": True, "reason": "guest-reset"}
        assert vm.wait_exit() == 0


def test_triple_fault_resets_only_a_machine_that_reboots(tmp_path):
    kernel = reset_kernel(tmp_path, UD2_CODE)
    vm, path = start_paused(tmp_path, "--virtio", "off", "-m", "4M", "--kernel", kernel)
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        q.cmd("set-action", {"reboot": "reset"})
        q.cmd("cont")
        assert q.wait_event("RESET", timeout=BOOT_TIMEOUT)["data"] == {
            "guest": True, "reason": "guest-reset"}
        q.cmd("quit")
        assert vm.wait_exit() == 0
    vm, path = start_paused(tmp_path, "--virtio", "off", "-m", "4M", "--kernel", kernel,
                            "--no-reboot", sock="qmp2.sock")
    with vm, Qmp(path, timeout=BOOT_TIMEOUT) as q:
        q.cmd("cont")
        assert vm.wait_exit() == 6  # plugvm's crash: a register dump, status 6
        assert vm.lines("guest triple fault", stream="stderr"), vm.transcript()
