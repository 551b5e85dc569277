"""Policies: ordered CEL rules and a default, presets, policy files, alert hooks."""
