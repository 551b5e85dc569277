"""Unit tests: run `python3 -m unittest` from the project folder."""
