# SPDX-License-Identifier: MIT
"""A QMP client on Python's standard library alone, written from QEMU's protocol
description (docs/interop/qmp-spec): greeting, qmp_capabilities, commands matched to their
replies by "id", events collected as they arrive. It speaks to plugvm and to QEMU alike.
"""
import itertools
import json
import os
import socket
import time


class QmpError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('class')}: {error.get('desc')}")
        self.error_class = error.get("class")
        self.desc = error.get("desc")


class Qmp:
    def __init__(self, path, timeout=30.0, negotiate=True):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        self.ids = itertools.count(1)
        self.greeting = self.recv()
        if negotiate:
            self.cmd("qmp_capabilities")

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def recv(self):
        """The next JSON object from the server; None at EOF."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, name, args=None):
        """Send a command; return its reply object (events meanwhile go to self.events)."""
        rid = f"t{next(self.ids)}"
        req = {"execute": name, "id": rid}
        if args is not None:
            req["arguments"] = args
        self.send_raw(json.dumps(req) + "\n")
        while True:
            msg = self.recv()
            if msg is None:
                raise EOFError(f"connection closed waiting for {name}")
            if "event" in msg:
                self.events.append(msg)
            elif msg.get("id") == rid:
                return msg

    def cmd(self, name, args=None):
        reply = self.execute(name, args)
        if "error" in reply:
            raise QmpError(reply["error"])
        return reply["return"]

    def wait_event(self, name, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["event"] == name:
                    return self.events.pop(i)
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            msg = self.recv()
            if msg is None:
                raise EOFError(f"connection closed waiting for event {name}")
            if "event" in msg:
                self.events.append(msg)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {name} event within {timeout}s")


def wait_socket(path, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout}s")
        time.sleep(0.02)
