# SPDX-License-Identifier: MIT
"""The VMM's resident memory: an idle 2-vCPU VM stays within 5 MiB of RSS, and
libxml2 (with what it brings: ICU, zlib, liblzma) is mapped only while a domain document is
read, never in a running VM. bench/memory/run measures the same with its breakdown."""
import os

from vm import GUEST, plugvm

RSS_BOUND_KB = 5 * 1024
XML_LIBS = ("libxml2.so", "libicuuc.so", "libicudata.so", "liblzma.so")


def rss_kb(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Rss:"):
                return int(line.split()[1])
    raise AssertionError("no Rss line")


def mapped(pid):
    """The files a process maps."""
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[5] for line in f if len(line.split()) > 5}


def test_an_idle_2_vcpu_vm_stays_within_5_mib():
    with plugvm("--smp", "2", "--qmp", "none") as vm:
        vm.wait_for(r"^plugvm-guest: boot done, staying up ")
        rss = rss_kb(vm.proc.pid)
        files = mapped(vm.proc.pid)
        assert rss <= RSS_BOUND_KB, (rss, sorted(files))
        assert not [f for f in files if any(lib in f for lib in XML_LIBS)], sorted(files)


def test_a_vm_from_a_domain_document_unloads_libxml2(tmp_path):
    doc = tmp_path / "d.xml"
    doc.write_text(f"""<domain type='kvm'><name>mem</name><memory unit='MiB'>64</memory>
<vcpu>2</vcpu><os><type arch='x86_64' machine='pc'>hvm</type>
<kernel>{os.path.abspath(GUEST)}</kernel></os></domain>""")
    with plugvm("--domain", str(doc), "--qmp", "none") as vm:
        vm.wait_for(r"^plugvm-guest: boot done, staying up ")
        files = mapped(vm.proc.pid)
        assert not [f for f in files if any(lib in f for lib in XML_LIBS)], sorted(files)
