# SPDX-License-Identifier: MIT
"""libvirt 9.0's capabilities probe (hypervisor-interfaces.md 9.2), replayed in its order on
the real VMM over QMP: the shapes libvirt needs, and that each answer is true of plugvm:
the schema lists exactly what query-commands lists, query-kvm matches /dev/kvm, cpu-max is
what --smp maxcpus= accepts. plugvm runs with a machine under -S: the probe's commands do
not depend on it (test_control.c runs them without one).
"""
import os

from qmp import Qmp, wait_socket
from vm import plugvm, run_plugvm

# What libvirt 9.0 asks device-list-properties whatever qom-list-types said (spec 9.2 item 8).
LIBVIRT_DEVICES = ["virtio-blk-pci", "scsi-hd", "ide-hd", "PIIX4_PM", "kvm-pit", "ICH9-LPC",
                   "virtio-balloon-pci", "virtio-balloon-device", "usb-host"]


def probe_vm(tmp_path, *args):
    path = str(tmp_path / "qmp.sock")
    vm = plugvm("-S", "--qmp", path, *args)
    wait_socket(path)
    return vm, path


def test_libvirt_probe_sequence_gets_true_answers(tmp_path):
    vm, path = probe_vm(tmp_path, "--smp", "1,maxcpus=4")
    with vm, Qmp(path, negotiate=False) as q:
        assert q.greeting["QMP"]["version"]["qemu"] == {"major": 7, "minor": 2, "micro": 0}
        # 1-2: negotiation, then the version libvirt decides by (4.2.0 at least) and package
        assert q.cmd("qmp_capabilities") == {}
        ver = q.cmd("query-version")
        assert ver == q.greeting["QMP"]["version"], ver
        assert ver["package"].startswith("plugvm "), ver
        # 3
        assert q.cmd("query-target") == {"arch": "x86_64"}
        # 4-5: the schema is the command table (an array; {} would be fatal)
        schema = q.cmd("query-qmp-schema")
        commands = q.cmd("query-commands")
        assert isinstance(schema, list) and isinstance(commands, list)
        names = {c["name"] for c in commands}
        assert len(names) == len(commands), commands
        assert {e["name"] for e in schema if e["meta-type"] == "command"} == names
        by_name = {e["name"]: e for e in schema}
        assert len(by_name) == len(schema)  # libvirt keys a hash table by name
        for e in schema:
            for ref in ("arg-type", "ret-type", "element-type"):
                assert ref not in e or e[ref] in by_name, e
        assert "query-hotpluggable-cpus" in names  # or libvirt's setvcpus fails later
        assert "query-tpm-models" not in names  # CommandNotFound is what libvirt tolerates
        for json_switch in ("object-add", "features"):
            assert json_switch not in str(schema)  # -device/-object stay key=value
        for n in names:  # what the schema says each command takes, it takes
            for m in by_name[by_name[n]["arg-type"]]["members"]:
                assert m["type"] in by_name, m
        # 6: libvirt probes again whenever this disagrees with /dev/kvm
        usable = os.access("/dev/kvm", os.R_OK | os.W_OK)
        assert q.cmd("query-kvm") == {"enabled": usable, "present": os.path.exists("/dev/kvm")}
        # 7: a <serial> needs isa-serial; tcg-accel would trigger a second probe
        types = {t["name"] for t in q.cmd("qom-list-types")}
        assert {"isa-serial", "host-x86_64-cpu", "kvm-accel", "pc-i440fx-7.2-machine",
                "pc-q35-7.2-machine", "none-machine"} <= types, types
        assert "tcg-accel" not in types
        # 8: devices plugvm lacks
        for dev in LIBVIRT_DEVICES:
            r = q.execute("device-list-properties", {"typename": dev})
            assert r["error"]["class"] == "DeviceNotFound", (dev, r)
        props = q.cmd("device-list-properties", {"typename": "host-x86_64-cpu"})
        assert {"socket-id", "core-id", "thread-id"} <= {p["name"] for p in props}
        # 9: [] here, never DeviceNotFound (it crashes libvirtd 9.0)
        assert q.cmd("qom-list-properties", {"typename": "memory-backend-file"}) == []
        # 10: the machines, with aliases for XML saying machine='pc' / 'q35'
        machines = {m["name"]: m for m in q.cmd("query-machines")}
        assert machines["pc-i440fx-7.2"]["alias"] == "pc"
        assert machines["pc-i440fx-7.2"]["is-default"] is True
        assert machines["pc-q35-7.2"]["alias"] == "q35"
        for m in ("pc-i440fx-7.2", "pc-q35-7.2"):
            assert machines[m]["hotpluggable-cpus"] is True, machines[m]
            assert machines[m]["default-cpu-type"] == "host-x86_64-cpu"
            assert machines[m]["default-cpu-type"] in types
        assert "none" in machines
        # 11
        assert q.cmd("qom-list-properties", {"typename": "none-machine"}) == []
        # 12: tolerated CommandNotFound; arrays where libvirt wants arrays
        assert q.execute("query-tpm-models")["error"]["class"] == "CommandNotFound"
        assert q.cmd("query-command-line-options") == []
        if "query-migrate-capabilities" in names:
            assert isinstance(q.cmd("query-migrate-capabilities"), list)
        # The probe changed nothing: the VM still waits for cont, and quits cleanly.
        assert q.cmd("query-status")["status"] == "prelaunch"
        assert q.cmd("quit") == {}
        assert vm.wait_exit() == 0


def test_cpu_max_is_what_smp_accepts(tmp_path):
    vm, path = probe_vm(tmp_path)
    with vm, Qmp(path) as q:
        cpu_max = {m["name"]: m["cpu-max"] for m in q.cmd("query-machines")}["pc-i440fx-7.2"]
        q.cmd("quit")
        assert vm.wait_exit() == 0
    assert cpu_max >= 1
    vm, path = probe_vm(tmp_path, "--smp", f"1,maxcpus={cpu_max}")
    with vm, Qmp(path) as q:
        hot = q.cmd("query-hotpluggable-cpus")
        assert sum(c["vcpus-count"] for c in hot) == cpu_max
        q.cmd("quit")
        assert vm.wait_exit() == 0
    status, vm = run_plugvm("-S", "--qmp", str(tmp_path / "no.sock"),
                            "--smp", f"1,maxcpus={cpu_max + 1}")
    assert status == 2, vm.transcript()
    assert vm.lines(rf"{cpu_max + 1} v?CPUs exceed .*limit of {cpu_max}\b", stream="stderr"), \
        vm.transcript()
