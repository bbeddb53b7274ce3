"""A pytest plugin for the frontend differential test (test_bytecode_frontend.py): records every PTX cujit makes
while the tests run, per test, into the JSON file CUJIT_PTX_RECORD names. Loaded with ``-p ptx_recorder``."""

import json
import os

import pytest

_records = {}
_current = [None]


def pytest_configure(config):
    from cujit import _core

    _core.observe_ptx(lambda ptx, typed, options: _records.setdefault(_current[0], []).append(ptx))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _current[0] = item.nodeid
    yield
    _current[0] = None


def pytest_sessionfinish(session):
    path = os.environ.get("CUJIT_PTX_RECORD")
    if path:
        with open(path, "w") as f:
            json.dump(_records, f)
