"""Drive a sans-IO plan with canned answers, no database: what it asked, what it returned."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from langmem_vault.db._store_plans import Batch


def _asked(step: Any) -> Any:
    return step.ops if isinstance(step, Batch) else step


def drive(plan: Generator[Any, Any, Any], *answers: Any) -> tuple[list[Any], Any]:
    """Send ``answers`` in order (the rows of a Query, the results of a store batch) and
    return the steps the plan yielded (a store batch as its list of ops) and its return
    value. A plan that asks more than ``answers`` hold fails the test; one that stops early
    leaves answers unused, also a failure.
    """
    steps: list[Any] = []
    pending = list(answers)
    try:
        steps.append(_asked(plan.send(None)))
        while True:
            if not pending:
                raise AssertionError(f"the plan asked for step {len(steps)} with no answer left")
            steps.append(_asked(plan.send(pending.pop(0))))
    except StopIteration as done:
        assert not pending, f"{len(pending)} answer(s) left unused"
        return steps, done.value
