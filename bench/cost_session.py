"""The cost benchmark's session: the task and the 40 scripted model steps that investigate and
fix the bug of bench/cost_project.py's workspace (39 tool calls, then the final answer). The
commands really run, through `epistemic run`, so their outputs are what a model would read.

Not a benchmark itself: bench_cost.py imports it (a script's own folder is first on its path).
"""

from __future__ import annotations

from typing import Any

TASK = (
    "The inventory report shows a wrong total value and the test suite fails. Find out why, "
    "fix it without changing the public functions, and make sure all tests pass."
)


def _bash(command: str, act: str, reason: str) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command, "type": act, "reason": reason}


TESTS = "python3 -m unittest discover -s tests -v 2>&1 | tail -40"
FIX_OLD = "        return sum(item.quantity for item in self.items.values())"
FIX_NEW = "        return sum(item.value_cents() for item in self.items.values())"

STEPS: list[tuple[str, tuple[str, dict[str, Any]]]] = [
    (
        "I will start by seeing what the project holds.",
        _bash(
            "ls -la",
            "collect-info",
            "Nothing is known about this workspace yet: list it before choosing where to look.",
        ),
    ),
    (
        "The README should say what the report is for.",
        _bash(
            "cat README.md",
            "collect-info",
            "Read the README to learn what the report computes and how it is run.",
        ),
    ),
    (
        "Now the source files.",
        _bash(
            "find . -name '*.py' -not -path './.epistemic/*' | sort",
            "collect-info",
            "List every Python file to see how the package and its tests are laid out.",
        ),
    ),
    (
        "The data model first.",
        (
            "read_file",
            {
                "path": "inventory/models.py",
                "reason": "See how an item's value is defined before judging any total.",
            },
        ),
    ),
    (
        "Then the store, where the total is computed.",
        (
            "read_file",
            {
                "path": "inventory/store.py",
                "reason": "The total value comes from the store; read how it is summed.",
            },
        ),
    ),
    (
        "Let me run the tests to see the failure itself.",
        _bash(
            TESTS,
            "test-hypothesis",
            "I believe test_total_value fails because total_value sums "
            "quantities; a pass, or another failing test, refutes it.",
        ),
    ),
    (
        "The failing test states the expectation.",
        (
            "read_file",
            {
                "path": "tests/test_store.py",
                "reason": (
                    "Read the expectation of the failing test: price times quantity, in cents."
                ),
            },
        ),
    ),
    (
        "Where else is value computed?",
        _bash(
            'grep -n "def " inventory/*.py',
            "collect-info",
            "List the functions of the package to find every place a value is computed.",
        ),
    ),
    (
        "The report uses the total too.",
        _bash(
            "sed -n 1,80p inventory/report.py",
            "collect-info",
            "Read the report to see how it formats and uses the total value.",
        ),
    ),
    (
        "What does the real data look like?",
        _bash(
            "head -30 data/stock.csv",
            "collect-info",
            "Look at the stock file's rows to see the prices and quantities the total must add up.",
        ),
    ),
    (
        "The changelog may explain the cents change.",
        _bash(
            "cat CHANGELOG.md",
            "collect-info",
            "Check whether the move to cents in 0.3.0 could have introduced the wrong sum.",
        ),
    ),
    (
        "The log shows what the report printed lately.",
        _bash(
            "tail -40 logs/app.log",
            "collect-info",
            "See the recent report runs in the log for the values that were actually printed.",
        ),
    ),
    (
        "Every use of total_value.",
        _bash(
            'grep -rn "total_value" inventory tests',
            "collect-info",
            "Find every caller of total_value so that a fix breaks none of them.",
        ),
    ),
    (
        "A quick check of the sum on the sample data.",
        _bash(
            'python3 -c "from inventory.models import Item; from inventory.store import '
            "Store; s = Store([Item('A', 'a', 150, 40)]); print(s.total_value())\"",
            "test-hypothesis",
            "I suspect total_value sums quantities, so 40 items at 1.50 "
            "print 40; printing 6000 would refute it.",
        ),
    ),
    (
        "The command line, for completeness.",
        (
            "read_file",
            {
                "path": "inventory/cli.py",
                "reason": "Read the command line to know how the report is produced end to end.",
            },
        ),
    ),
    (
        "How large is each module?",
        _bash(
            "wc -l inventory/*.py tests/*.py",
            "collect-info",
            "Size the modules to judge how much code the fix can touch.",
        ),
    ),
    (
        "Only the store tests, verbosely.",
        _bash(
            "python3 -m unittest tests.test_store -v 2>&1 | tail -30",
            "test-hypothesis",
            "I expect only the total value test to fail in test_store; "
            "a second failure refutes a single cause.",
        ),
    ),
    (
        "The fix: sum each item's value, not its quantity.",
        (
            "str_replace_edit",
            {
                "path": "inventory/store.py",
                "old": FIX_OLD,
                "new": FIX_NEW,
                "reason": (
                    "total_value must add price times quantity; "
                    "Item.value_cents already computes it."
                ),
            },
        ),
    ),
    (
        "The whole suite again.",
        _bash(
            TESTS,
            "verify",
            "Confirm the store fix: every test should now pass, the report's included.",
        ),
    ),
    (
        "The report test, to be sure of its expectation.",
        (
            "read_file",
            {
                "path": "tests/test_report.py",
                "reason": "Read the report's tests to check their expected total against the fix.",
            },
        ),
    ),
    (
        "How money is rounded.",
        _bash(
            'grep -n "money\\|round" inventory/*.py',
            "collect-info",
            "Check every rounding step between the CSV price and the printed money.",
        ),
    ),
    (
        "A check of money() on edge values.",
        _bash(
            'python3 -c "from inventory.report import money; '
            'print(money(5), money(12345), money(100))"',
            "test-hypothesis",
            "I believe money pads cents to two digits; an output like 0.5 would refute it.",
        ),
    ),
    (
        "The report's header line, to mention the unit.",
        (
            "str_replace_edit",
            {
                "path": "inventory/report.py",
                "old": 'f"total value: {money(store.total_value())}"',
                "new": 'f"total value: {money(store.total_value())}"  # in the shop currency',
                "reason": (
                    "Note the unit next to the total so the next reader "
                    "does not mistake cents for units."
                ),
            },
        ),
    ),
    (
        "All tests once more.",
        _bash(
            TESTS, "verify", "Confirm the whole suite still passes after the comment in the report."
        ),
    ),
    (
        "The store as it is now.",
        _bash(
            "cat inventory/store.py",
            "collect-info",
            "Re-read the store after the fix to check nothing else sums quantities.",
        ),
    ),
    (
        "Byte-compile to catch syntax errors early.",
        _bash(
            "python3 -m compileall -q inventory",
            "setup",
            "Compile the package: a means to catch syntax errors in the edited files quickly.",
        ),
    ),
    (
        "The command line's help.",
        _bash(
            "python3 -m inventory.cli --help",
            "collect-info",
            "See the command line's options before running the real report.",
        ),
    ),
    (
        "The real report.",
        _bash(
            "python3 -m inventory.cli report data/stock.csv | head -40",
            "collect-info",
            "Run the report on the real stock file to see the corrected total value.",
        ),
    ),
    (
        "The start of the log, for the old totals.",
        _bash(
            "sed -n 1,60p logs/app.log",
            "collect-info",
            "Read the older report runs to compare their totals with the corrected one.",
        ),
    ),
    (
        "How many warnings were logged?",
        _bash(
            "grep -c WARN logs/app.log",
            "collect-info",
            "Count the warnings to decide whether they deserve a look of their own.",
        ),
    ),
    (
        "Record the fix in the changelog.",
        (
            "str_replace_edit",
            {
                "path": "CHANGELOG.md",
                "old": "# Changelog\n",
                "new": (
                    "# Changelog\n\n## 0.4.1\n- `Store.total_value()` adds "
                    "price times quantity (it added quantities).\n"
                ),
                "reason": (
                    "The fix changes a printed total: the changelog "
                    "must say so for the purchasing team."
                ),
            },
        ),
    ),
    (
        "The quiet run of the suite.",
        _bash(
            "python3 -m unittest discover -s tests -q 2>&1 | tail -5",
            "verify",
            "Confirm the suite passes after the changelog entry, with the short summary.",
        ),
    ),
    (
        "The package's version.",
        _bash(
            "cat inventory/__init__.py",
            "collect-info",
            "Check the version string to see whether it needs a bump with the changelog.",
        ),
    ),
    (
        "Any open TODOs?",
        _bash(
            'grep -rn "TODO" inventory || echo none',
            "collect-info",
            "Look for TODO notes that the fix might have resolved or made stale.",
        ),
    ),
    (
        "The data and log folders.",
        _bash(
            "ls -la data logs",
            "collect-info",
            "See the input files' sizes and dates before the final check.",
        ),
    ),
    (
        "Remove the compiled files I made.",
        _bash(
            "rm -rf inventory/__pycache__ tests/__pycache__",
            "cleanup",
            "Remove the bytecode my compile step left, so the workspace holds only sources.",
        ),
    ),
    (
        "The report's tail, once more.",
        _bash(
            "python3 -m inventory.cli report data/stock.csv | tail -5",
            "verify",
            "Confirm the report still runs after the cleanup and shows the per-tag values.",
        ),
    ),
    (
        "The changelog as it reads now.",
        _bash(
            "cat CHANGELOG.md",
            "collect-info",
            "Re-read the changelog entry as the purchasing team will see it.",
        ),
    ),
    (
        "The final full run.",
        _bash(
            TESTS,
            "verify",
            "Confirm the finished work: the full suite passes, verbosely, one last time.",
        ),
    ),
]
FINAL = (
    "Fixed: `Store.total_value()` summed quantities instead of price times quantity (cents), "
    "so the report's total value was wrong. It now adds `Item.value_cents()`; all tests pass, "
    "the report shows the corrected total, and the changelog records the fix."
)


def script(steps: int = 40) -> list[tuple[str, list[Any]]]:
    """The first `steps - 1` tool-call turns, then the final answer."""
    turns: list[tuple[str, list[Any]]] = []
    for number, (text, (tool, args)) in enumerate(STEPS[: steps - 1], start=1):
        turns.append((text, [(f"toolu_{number:03d}", tool, args)]))
    turns.append((FINAL, []))
    return turns


assert len(STEPS) == 39, len(STEPS)
