# SPDX-License-Identifier: MIT
"""What several benchmarks share: the nearest-rank percentile, KVM's tracepoints through
tracefs (root), whose lines they read per thread group, and the tests' kvm_module()."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "integration"))
from vm import kvm_module  # noqa: E402,F401  (one definition, the tests')

TRACEFS = "/sys/kernel/tracing"
# A trace line with options/record-tgid: task-tid (tgid) [cpu] flags timestamp: event: rest
TRACE_LINE = re.compile(r"^\s*(\S+)-(\d+)\s+\(\s*(\S+)\)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")


def pct(values, p):
    """Nearest-rank p-th percentile: the ceil(p/100 * n)-th smallest value."""
    s = sorted(values)
    return s[max(0, -(-len(s) * p // 100) - 1)]


def tracefs_write(name, value):
    with open(os.path.join(TRACEFS, name), "w") as f:
        f.write(value)


def tracefs_start(events, buffer_kb):
    """Trace the KVM `events` (names under events/kvm) from a clean buffer, every line with
    its thread group. False if tracefs or one of the events is missing (not root, no KVM)."""
    if not os.path.exists(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=False,
                       stderr=subprocess.DEVNULL)
    if not all(os.path.exists(os.path.join(TRACEFS, "events", "kvm", e)) for e in events):
        return False
    try:
        for name, value in (("tracing_on", "0"), ("trace", ""),
                            ("buffer_size_kb", str(buffer_kb)), ("options/record-tgid", "1")):
            tracefs_write(name, value)
        for e in events:
            tracefs_write(f"events/kvm/{e}/enable", "1")
    except OSError:
        return False
    return True


def tracefs_stop(events):
    tracefs_write("tracing_on", "0")
    for e in events:
        tracefs_write(f"events/kvm/{e}/enable", "0")


def trace_lines():
    """The buffer's lines as (task, tid, tgid, timestamp, event, rest), in time order."""
    with open(os.path.join(TRACEFS, "trace")) as f:
        for line in f:
            m = TRACE_LINE.match(line)
            if m:
                yield m.groups()
