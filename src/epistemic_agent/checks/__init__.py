"""Declared versus done, after the fact: the consistency flags and lint."""
