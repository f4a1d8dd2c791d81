#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write benchmark tables into bench/README.md.

Each benchmark NAME leaves its markdown in build/bench/NAME.md; this script replaces the
text between "<!-- bench:NAME -->" and "<!-- /bench:NAME -->" in bench/README.md with it,
appending a new section when the markers are missing. Usage: bench-readme.py NAME...
"""
import pathlib
import sys

README = pathlib.Path("bench/README.md")
HEADER = "# plugvm benchmarks\n\n`make bench` runs every benchmark and rewrites the sections below.\n"


def main(names):
    text = README.read_text() if README.exists() else HEADER
    for name in names:
        result = pathlib.Path(f"build/bench/{name}.md")
        if not result.exists():
            print(f"bench-readme: no result for {name}", file=sys.stderr)
            return 1
        body = result.read_text().strip() + "\n"
        start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
        if start in text and end in text:
            head, rest = text.split(start, 1)
            _, tail = rest.split(end, 1)
            text = f"{head}{start}\n{body}{end}{tail}"
        else:
            text = text.rstrip("\n") + f"\n\n{start}\n{body}{end}\n"
    README.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
