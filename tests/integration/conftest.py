# SPDX-License-Identifier: MIT
"""pytest setup: the artifacts under test must exist (make builds them; nothing skips)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from vm import GUEST, GUEST_RT, PLUGVM  # noqa: E402


def pytest_sessionstart(session):
    missing = [p for p in (PLUGVM, GUEST, GUEST_RT) if not os.access(p, os.R_OK)]
    if missing:
        pytest.exit(f"missing {', '.join(missing)}: run `make` first", returncode=2)
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        pytest.exit("/dev/kvm is not accessible: the integration tests need KVM", returncode=2)
