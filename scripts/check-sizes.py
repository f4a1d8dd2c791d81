#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keep the product code in small pieces: every C file under vmm/, guest/, tools/
and common/ is at most 700 lines and every C function in them at most 100 (ctags' extents).
Each offender is named as FILE:LINE FUNCTION N lines. scripts/check-sizes.allow names the
offenders still being split; an entry that no longer offends is itself an error, so the
list only shrinks. Usage: scripts/check-sizes.py [ROOT] (default: the repository)."""
import json
import os
import subprocess
import sys

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 100
FOLDERS = ("vmm/", "guest/", "tools/", "common/")


def product_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "--",
                          "*.c", "*.h"], check=True, capture_output=True, text=True).stdout
    return sorted(f for f in out.split() if f.startswith(FOLDERS)
                  and os.path.exists(os.path.join(root, f)))


def functions(root, files):
    """(file, line, name, lines) of every function ctags finds in `files`."""
    try:
        out = subprocess.run(["ctags", "--output-format=json", "--fields=+ne", "--kinds-C=f",
                              "--languages=C", "--langmap=C:.c.h", "-o", "-"] + files,
                             cwd=root, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("check-sizes: ctags not found (universal-ctags; scripts/deps.sh installs it)")
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") == "function" and "end" in tag:
            yield tag["path"], tag["line"], tag["name"], tag["end"] - tag["line"] + 1


def read_allow(path):
    """Entries `FILE` (the file's length) or `FILE:FUNCTION`; '#' starts a comment."""
    allow = set()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    allow.add(line)
    return allow


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    allow_path = os.path.join(root, "scripts/check-sizes.allow")
    allow = read_allow(allow_path)
    files = product_files(root)
    offenders = []  # (allow key, message)
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_FILE_LINES:
            offenders.append((f, f"{f}: {n} lines (at most {MAX_FILE_LINES})"))
    for f, line, name, n in functions(root, files):
        if n > MAX_FUNCTION_LINES:
            offenders.append((f"{f}:{name}",
                              f"{f}:{line} {name} {n} lines (at most {MAX_FUNCTION_LINES})"))
    bad = [msg for key, msg in offenders if key not in allow]
    stale = sorted(allow - {key for key, _ in offenders})
    for msg in bad:
        print(f"check-sizes: {msg}", file=sys.stderr)
    for key in stale:
        print(f"check-sizes: {key} is in scripts/check-sizes.allow but within the limits: "
              "remove it", file=sys.stderr)
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
