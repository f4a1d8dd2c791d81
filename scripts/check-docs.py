#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every file and link the docs name exists: README.md, docs/*.md, bench/README.md,
DEVELOPERS.md and configs/**/*.md are read; a Markdown link to a local target, a path in
backticks (`vmm/cpus.c`, `tests/integration/test_qmp.py`) and a bare source file name in
backticks (`agent.c`) must resolve in the tree (git's files, tracked or not ignored).
Generated paths (build/...), placeholders (NAME, N, *, {a,b}) and URLs are not files.
Exit 1 with one line per dangling name. `make check-static` runs it; with arguments, it
reads those documents instead (tests/integration/test_docs.py)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_DIRS = ("vmm/", "guest/", "common/", "tools/", "tests/", "scripts/", "bench/",
            "configs/", "docs/", ".ci/")
SOURCE_EXT = (".c", ".h", ".py", ".sh", ".mk", ".S", ".ld", ".md", ".xml", ".gp")
PLACEHOLDER = re.compile(r"[*{}<>$]|\b(NAME|KIND|PID|MODULE|FILE|DIR|PATH|USER|N)\b|\.\.\.|XX")

# "Linux's `kernel/cpu.c`", "QEMU's hw/acpi/cpu.c": another project's files.
FOREIGN = re.compile(r"\b(Linux|QEMU|libvirt|kvmtool|Firecracker|Solo5|glibc|xv6|Cloud Hypervisor)('s)?\b(?:(?!\. |; ).)*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
# A path with a folder and a source file's ending, anywhere in the text (table cells too).
PATH = re.compile(r"(?<![\w/.:-])((?:\.\./|[\w.-]+/)+[\w.+-]+\.(?:c|h|py|sh|mk|S|ld|md|xml|gp))\b")


def tree_files():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    files = set(out.split())
    dirs = set()
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
    return files, dirs


def docs(files):
    for f in sorted(files):
        if f in ("README.md", "DEVELOPERS.md", "bench/README.md") or \
           (f.startswith("docs/") and f.endswith(".md")) or \
           (f.startswith("configs/") and f.endswith(".md")):
            yield f


def exists(path, files, dirs):
    path = os.path.normpath(path).rstrip("/")
    return path in files or path in dirs


def resolves(word, files, dirs):
    """From the top of the tree, or as the tail of a tracked path (`devices/uart16550.c` in
    a section about vmm/)."""
    if exists(word, files, dirs):
        return True
    tail = "/" + os.path.normpath(word)
    return any(f.endswith(tail) for f in files)


def check_doc(doc, files, dirs, basenames):
    bad = []
    here = os.path.dirname(os.path.relpath(os.path.join(ROOT, doc), ROOT))
    if here.startswith(".."):
        here = ""
    in_fence = False
    prev = ""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = target.split("#", 1)[0]
                if path and not exists(os.path.join(here, path), files, dirs):
                    bad.append(f"{doc}:{lineno}: link to '{target}': no such file")
            text = LINK.sub("", line)
            for m in PATH.finditer(text):
                word = m.group(1)
                if FOREIGN.search((prev + " " + text[:m.start()])[-100:]):
                    continue
                if PLACEHOLDER.search(word) or word.startswith(("build/", "linux/", "asm/")) \
                        or word.startswith("/"):
                    continue
                if word.startswith("../") and not exists(os.path.join(here, word), files, dirs):
                    bad.append(f"{doc}:{lineno}: names '{word}': outside the repository")
                elif not word.startswith("../") and not resolves(word, files, dirs):
                    bad.append(f"{doc}:{lineno}: names '{word}': no such file")
            for cm in CODE.finditer(line):
                code = cm.group(1)
                if FOREIGN.search((prev + " " + line[:cm.start()])[-100:]):
                    continue
                word = code.strip().split()[0] if code.strip() else ""
                word = word.rstrip(".,;:)")
                word = re.sub(r":\d+(-\d+)?$", "", word)  # file.c:123
                if not word or PLACEHOLDER.search(word) or word.startswith(("build/", ".")):
                    continue
                if word.startswith(TOP_DIRS):
                    if not exists(word, files, dirs) and not PATH.fullmatch(word):
                        bad.append(f"{doc}:{lineno}: names '{word}': no such file")
                elif "/" not in word and word.endswith(SOURCE_EXT) and \
                        re.fullmatch(r"[A-Za-z0-9_.+-]+", word):
                    if word not in basenames:
                        bad.append(f"{doc}:{lineno}: names '{word}': no file of that name")
            prev = line.rstrip("\n")
    return bad


def main():
    files, dirs = tree_files()
    basenames = {os.path.basename(f) for f in files}
    bad = []
    for doc in sys.argv[1:] or docs(files):
        bad += check_doc(doc, files, dirs, basenames)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
