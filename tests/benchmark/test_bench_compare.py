"""bench/compare.py pairs the figures two trees print: same table, same row, same column."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from conftest import ROOT


def compare_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BASE = """# a heading
| case | median µs | × bash |
|---|--:|--:|
| bare | 2,000 | 1.00 |
| **confined** | 3,000 | **1.50** |

near misses:                  6.7 MB/s
"""
OURS = BASE.replace("3,000", "2,400").replace("**1.50**", "**1.20**").replace("6.7", "7.0")


def test_cells_are_keyed_by_table_row_and_column_and_labelled_lines_count() -> None:
    compare = compare_module()
    found = compare.cells("bench_x", BASE)
    header = "case | median µs | × bash"
    assert found[("bench_x", header, "bare", "median µs")] == 2000.0
    assert found[("bench_x", header, "**confined**", "× bash")] == 1.5
    assert found[("bench_x", "", "near misses", "MB/s")] == 6.7
    assert len(found) == 5


def test_the_paired_table_gives_medians_and_their_ratio() -> None:
    compare = compare_module()
    base = [compare.cells("bench_x", BASE), compare.cells("bench_x", BASE)]
    ours = [compare.cells("bench_x", OURS), compare.cells("bench_x", BASE)]
    lines = compare.compare(base, ours)
    assert "| bench_x | **confined** | median µs | 3,000 | 2,700 | 0.90 |" in lines
    only = compare.compare([compare.cells("bench_x", BASE)], [{}])
    assert "| bench_x | bare | median µs | 2,000 | - | - |" in only


def test_rows_with_the_same_name_are_told_apart_by_their_second_cell() -> None:
    compare = compare_module()
    text = (
        "| mix | calls | mean |\n|---|--:|--:|\n| mix | 100 | 3,000 |\n| mix | 10,000 | 4,000 |\n"
    )
    found = compare.cells("bench_core", text)
    header = "mix | calls | mean"
    assert found[("bench_core", header, "mix, calls 100", "mean")] == 3000.0
    assert found[("bench_core", header, "mix, calls 10,000", "mean")] == 4000.0
    assert len(found) == 4
