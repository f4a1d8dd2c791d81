# SPDX-License-Identifier: MIT
"""pytest setup: the artifacts under test must exist (make builds them; nothing skips)."""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from vm import GUEST, GUEST_RT, PLUGVM  # noqa: E402


@pytest.fixture(scope="session")
def libvirtd(tmp_path_factory):
    """libvirt's daemons for the session: started by scripts/libvirt-setup.sh unless they
    run, and only what it started is stopped at the end."""
    from lv import start_daemons, stop_daemons

    state = str(tmp_path_factory.mktemp("libvirt") / "started")
    start_daemons(state)
    yield state
    stop_daemons(state)


def pytest_sessionstart(session):
    missing = [p for p in (PLUGVM, GUEST, GUEST_RT) if not os.access(p, os.R_OK)]
    if missing:
        pytest.exit(f"missing {', '.join(missing)}: run `make` first", returncode=2)
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        pytest.exit("/dev/kvm is not accessible: the integration tests need KVM (on a host "
                    "without it, `make NESTED_KVM=1 integration` runs them in a nested-KVM "
                    "VM: scripts/nested-kvm.sh)", returncode=2)


def pytest_configure(config):
    # `make test-quick` runs what is not slow: a test is marked slow when it takes more than
    # ~10 s on the project's machines (README, "Tests").
    config.addinivalue_line("markers", "slow: takes more than ~10 s here; "
                            "`make test-quick` leaves it out (-m 'not slow')")
    config.addinivalue_line("markers", "nested_tcg_breaks(reason): the nested-KVM VM of "
                            "scripts/nested-kvm.sh cannot run this test; skipped there only")
    # VMs started without --qmp put their sockets here, not in /tmp: the suite leaves no
    # socket behind (Vm.kill() removes those of the VMs it kills; the rest is checked).
    if "PLUGVM_TEST_RUNTIME_DIR" not in os.environ:
        d = tempfile.mkdtemp(prefix="plugvm-tests-")
        os.environ["PLUGVM_TEST_RUNTIME_DIR"] = d
        os.environ["XDG_RUNTIME_DIR"] = d


def pytest_collection_modifyitems(config, items):
    # In scripts/nested-kvm.sh's VM (hosts without /dev/kvm, CI's among them) QEMU's TCG
    # emulates the SVM that KVM runs on; a test marked nested_tcg_breaks says which
    # emulator defect stops it there. It runs everywhere else.
    if os.environ.get("PLUGVM_NESTED_TCG") != "1":
        return
    for item in items:
        mark = item.get_closest_marker("nested_tcg_breaks")
        if mark:
            item.add_marker(pytest.mark.skip(reason="nested KVM on QEMU's TCG: " + mark.args[0]))


def pytest_sessionfinish(session, exitstatus):
    d = os.environ.get("PLUGVM_TEST_RUNTIME_DIR")
    if not d or os.environ.get("XDG_RUNTIME_DIR") != d or not os.path.isdir(d):
        return
    left = sorted(os.listdir(d))
    shutil.rmtree(d, ignore_errors=True)
    if left:
        print(f"\nthe tests left files in their XDG_RUNTIME_DIR: {', '.join(left)}")
        session.exitstatus = 1
