"""``--profile`` for the benchmarks: where one unit of work spends its time
(the top functions by their own time, from cProfile) and which SQL it sends
(statements per kind and table), so the next person sees the same picture.

    with Profile() as profile:
        ...  # the work, repeated
    profile.print(units=repeats, top=25)
"""

from __future__ import annotations

import cProfile
import io
import pstats
import re
from collections import Counter
from contextlib import AbstractContextManager
from pathlib import Path

# The table a statement is about: the first one it names after its verb.
_SETTINGS = re.compile(r"(\s*SET\s+LOCAL\s[^;]*;)+", re.IGNORECASE)
_PARENTHESIZED = re.compile(r"\([^()]*\)")
_TABLE = re.compile(r'\b(?:FROM|INTO|UPDATE|JOIN)\s+"?([A-Za-z_][\w]*)"?', re.IGNORECASE)


def statement_label(sql: str) -> str:
    """ "SELECT conversations_message", "INSERT properties_issue",
    "SAVEPOINT": a statement's verb and first table (for a SELECT, the first
    outside parentheses)."""
    settings = _SETTINGS.match(sql)
    if settings and sql[settings.end() :].strip():  # SET LOCALs sent with the query they are for
        return "SET LOCAL + " + statement_label(sql[settings.end() :])
    verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"
    outer = sql
    while verb == "SELECT" and (inner := _PARENTHESIZED.sub("", outer)) != outer:
        outer = inner  # a subquery in the select list names its own table first
    match = _TABLE.search(outer)
    if match and match.group(1).upper() == "AS":  # the outer FROM is a subquery: name the first table in it
        match = _TABLE.search(sql)
    return f"{verb} {match.group(1)}" if match and verb in {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"} else verb


class QueryTally:
    """A ``connection.execute_wrapper`` that counts statements by label."""

    def __init__(self) -> None:
        self.labels: Counter[str] = Counter()

    def __call__(self, execute, sql, params, many, context):
        self.labels[statement_label(sql)] += 1
        return execute(sql, params, many, context)

    @property
    def total(self) -> int:
        return sum(self.labels.values())


class Profile:
    """cProfile plus a query tally on the default connection, for the block."""

    def __init__(self) -> None:
        self.profiler = cProfile.Profile()
        self.queries = QueryTally()
        self._wrapper: AbstractContextManager[None] | None = None

    def __enter__(self) -> Profile:
        from django.db import connection

        self._wrapper = connection.execute_wrapper(self.queries)
        self._wrapper.__enter__()
        self.profiler.enable()
        return self

    def __exit__(self, *exc) -> None:
        self.profiler.disable()
        assert self._wrapper is not None
        self._wrapper.__exit__(*exc)

    def print(self, *, units: int, top: int = 25, unit: str = "request") -> None:
        stats = pstats.Stats(self.profiler)
        total = stats.total_tt  # type: ignore[attr-defined]
        print(f"\nprofile: {units} {unit}s, {total / units * 1000:.2f} ms per {unit} under cProfile (about 2x real)")
        print("top functions by own time:")
        _listing(stats, "tottime", top, restrict=())
        print("the project's own functions by cumulative time:")
        _listing(stats, "cumulative", top, restrict=(_ROOT_PATTERN,))
        print(f"SQL per {unit}: {self.queries.total / units:.1f} statements")
        for label, count in self.queries.labels.most_common():
            print(f"  {count / units:6.2f}  {label}")


_ROOT = str(Path(__file__).resolve().parent.parent) + "/"
# The project's files, not its virtualenv's.
_ROOT_PATTERN = "^" + re.escape(_ROOT) + "(?!\\.venv/)"


def _listing(stats: pstats.Stats, key: str, top: int, restrict: tuple[str, ...]) -> None:
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats(key).print_stats(*restrict, top)
    lines = out.getvalue().splitlines()
    start = next((n for n, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    for line in lines[start:]:
        if line.strip():
            print("  " + line.replace(_ROOT, ""))
