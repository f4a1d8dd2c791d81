# SPDX-License-Identifier: MIT
"""The docs name only what exists, and README lists every doc: scripts/check-docs.py (run by
`make check-static`) passes on the tree and fails, naming the line, on a document that names a
missing file or links to one."""
import os
import re
import subprocess

from vm import ROOT

CHECK = os.path.join(ROOT, "scripts", "check-docs.py")


def run_check(*docs):
    return subprocess.run(["/usr/bin/python3", CHECK, *docs], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_every_file_and_link_the_docs_name_exists():
    r = run_check()
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_dangling_name_or_link_fails_with_its_line(tmp_path):
    doc = tmp_path / "bad.md"
    doc.write_text("# A doc\n"
                   "The core is `vmm/cpus.c` and [the ABI](docs/abi.md).\n"
                   "Gone: `vmm/no_such_file.c`, [a link](docs/no-such-doc.md), `nothere.c`.\n"
                   "Another project's: Linux's `kernel/cpu.c`.\n")
    r = run_check(str(doc))
    assert r.returncode == 1, r.stdout
    lines = r.stdout.splitlines()
    assert any(":3: names 'vmm/no_such_file.c'" in l for l in lines), lines
    assert any(":3: link to 'docs/no-such-doc.md'" in l for l in lines), lines
    assert any(":3: names 'nothere.c'" in l for l in lines), lines
    assert len(lines) == 3, lines


def test_readme_lists_every_doc():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)[)#]", readme))
    docs = {"docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")}
    assert docs - linked == set(), f"README does not link {sorted(docs - linked)}"
