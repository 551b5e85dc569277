"""`core.registry.load`: the one lookup behind every name-to-import-path registry."""

from __future__ import annotations

import json

import pytest

from epistemic_agent.core.registry import load

REGISTRY = {"dumps": "json.dumps", "missing": "epistemic_agent.no_such_module.thing"}


def test_a_name_loads_what_its_path_names() -> None:
    assert load(REGISTRY, "dumps", "encoder") is json.dumps


def test_an_unknown_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="no encoder named 'yaml'; known: dumps, missing"):
        load(REGISTRY, "yaml", "encoder")


def test_a_path_to_nothing_fails_when_chosen_not_before() -> None:
    with pytest.raises(ModuleNotFoundError):
        load(REGISTRY, "missing", "encoder")
