"""The confinement mechanisms this machine has, for the benchmark's tests: a test of one the
machine lacks is skipped (tests/execute/test_confine.py fails instead: there they must work).

Imported as `from mechanisms import ...`; pytest puts tests/ on the path (pyproject's
`pythonpath`)."""

from __future__ import annotations

import pytest

from epistemic_agent.execute.sandbox.platform import Platform, detect

FOUND = detect(probe_bwrap=True)
MECHANISMS = ("landlock+namespaces", "landlock", "bwrap")


def confined_by(name: str) -> Platform:
    """The platform that confines acts by `name`, one of MECHANISMS; skips the test where this
    machine has not got it."""
    assert name in MECHANISMS, name
    if name == "bwrap":
        if FOUND.bwrap is None or FOUND.bwrap_error is not None:
            pytest.skip(f"no working bubblewrap: {FOUND.bwrap_error}")
        return Platform(None, "off", None, "off", FOUND.bwrap, None)
    if FOUND.landlock_abi is None:
        pytest.skip("no Landlock here")
    if name == "landlock":
        return Platform(FOUND.landlock_abi, None, None, "off", None, "not used")
    if FOUND.namespaces is None:
        pytest.skip("no namespaces here")
    return Platform(FOUND.landlock_abi, None, FOUND.namespaces, None, None, "not used")
