"""The one sans-IO runtime: generators of steps, and the two drivers that run them.

Every operation that does I/O is written once, as a generator that yields :class:`Step`
objects and receives each one's result; its return value is the operation's result. A step
knows how to run itself, sync (:meth:`Step.run`) and async (:meth:`Step.arun`), against the
*context* the driver holds: the cursor of a transaction for SQL statements
(:class:`~langmem_vault.db._runner.Query`), a store for store batches
(:class:`~langmem_vault.db._store_plans.Batch`). Steps that name their own target (a
:class:`Call` on the saver or the audit log, an :class:`Embed`, a model call) ignore it.
:func:`run_steps` and :func:`arun_steps` are the only drivers, so the sync and async paths
of an operation cannot drift apart (httpx's ``Auth.auth_flow`` works the same way).

>>> def greet():
...     name = yield Call.same(lambda: "Ada")
...     return f"hello {name}"
>>> run_steps(greet())
'hello Ada'
>>> import asyncio
>>> asyncio.run(arun_steps(greet()))
'hello Ada'
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, Protocol, TypeVar

from langmem_vault.db._workers import hand_off

__all__ = ["Call", "Embed", "Step", "Steps", "Together", "Within", "arun_steps", "run_steps"]

T = TypeVar("T")


class Step:
    """One I/O call of an operation. Subclasses run it against the driver's context."""

    __slots__ = ()

    def run(self, ctx: Any) -> Any:
        raise NotImplementedError

    async def arun(self, ctx: Any) -> Any:
        raise NotImplementedError


Steps = Generator[Step, Any, T]


def run_steps(steps: Steps[T], ctx: Any = None) -> T:
    """Run each step with ``ctx``, sending its result back; return the generator's value."""
    sent: Any = None
    try:
        while True:
            sent = steps.send(sent).run(ctx)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun_steps(steps: Steps[T], ctx: Any = None) -> T:
    """Async twin of :func:`run_steps`: each step's ``arun`` is awaited."""
    sent: Any = None
    try:
        while True:
            sent = await steps.send(sent).arun(ctx)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class Call(Step):
    """A call on another component (the saver, the audit log, a facade), as a sync and an
    async thunk."""

    __slots__ = ("asyn", "sync")

    def __init__(self, sync: Callable[[], Any], asyn: Callable[[], Awaitable[Any]]) -> None:
        self.sync = sync
        self.asyn = asyn

    @classmethod
    def same(cls, call: Callable[[], Any]) -> Call:
        """A call whose async twin is the same call, awaited when it returns an awaitable
        (async components keep the sync names: ``AsyncAuditLog.record``...)."""

        async def awaited() -> Any:
            outcome = call()
            return await outcome if inspect.isawaitable(outcome) else outcome

        return cls(call, awaited)

    def run(self, ctx: Any) -> Any:
        return self.sync()

    async def arun(self, ctx: Any) -> Any:
        return await self.asyn()


class Within(Step):
    """Other steps run with a context of their own, as one step: a store plan
    (``Within(store, plan)``) inside an operation over several components."""

    __slots__ = ("ctx", "steps")

    def __init__(self, ctx: Any, steps: Steps[Any]) -> None:
        self.ctx = ctx
        self.steps = steps

    def run(self, ctx: Any) -> Any:
        return run_steps(self.steps, self.ctx)

    async def arun(self, ctx: Any) -> Any:
        return await arun_steps(self.steps, self.ctx)


class Embedder(Protocol):
    def embed_documents(self, texts: list[str]) -> Sequence[Sequence[float]]: ...

    async def aembed_documents(self, texts: list[str]) -> Sequence[Sequence[float]]: ...

    def embed_query(self, text: str) -> Sequence[float]: ...

    async def aembed_query(self, text: str) -> Sequence[float]: ...


class Embed(Step):
    """An embedding call: ``embeddings.embed_documents(texts)`` (``aembed_documents`` async);
    with ``queries=True``, search queries one by one (``embed_query``: in turn sync, side by
    side async)."""

    __slots__ = ("embeddings", "queries", "texts")

    def __init__(self, embeddings: Embedder, texts: list[str], *, queries: bool = False) -> None:
        self.embeddings = embeddings
        self.texts = texts
        self.queries = queries

    def run(self, ctx: Any) -> Sequence[Sequence[float]]:
        if self.queries:
            return [self.embeddings.embed_query(text) for text in self.texts]
        return self.embeddings.embed_documents(self.texts)

    async def arun(self, ctx: Any) -> Sequence[Sequence[float]]:
        if self.queries:
            return await asyncio.gather(*(self.embeddings.aembed_query(t) for t in self.texts))
        return await self.embeddings.aembed_documents(self.texts)


class Together(Step):
    """Steps run at the same time, as one step; sends back their results, in order. For
    calls that wait on different things (a query embedding on the CPU, a store batch on the
    database): both release the GIL, so the step costs the longer of them, not their sum.

    Sync, the first step runs in the caller's thread and each other one on a daemon worker
    (:mod:`~langmem_vault.db._workers`, with the caller's context: the run's config, the
    tracing span), so one that hangs is left behind with the caller, as
    :class:`~langmem_vault.nodes._degrade.Degrade` leaves a body that ran out of time.
    Async, they are gathered. Each step runs to its end even when another fails; then the
    first failure, in the steps' order, is raised.

    >>> def both():
    ...     one, two = yield Together(Call.same(lambda: 1), Call.same(lambda: 2))
    ...     return one + two
    >>> run_steps(both()), asyncio.run(arun_steps(both()))
    (3, 3)
    """

    __slots__ = ("steps",)

    def __init__(self, *steps: Step) -> None:
        self.steps = steps

    def run(self, ctx: Any) -> list[Any]:
        first, *rest = self.steps
        handoffs = [hand_off(functools.partial(step.run, ctx)) for step in rest]
        outcomes = [_outcome(first.run, ctx)]
        for handoff in handoffs:
            handoff.wait()
            outcomes.append(handoff.outcome())
        return _results(outcomes)

    async def arun(self, ctx: Any) -> list[Any]:
        found = await asyncio.gather(*(s.arun(ctx) for s in self.steps), return_exceptions=True)
        return _results([(not isinstance(r, BaseException), r) for r in found])


def _outcome(call: Callable[[Any], Any], ctx: Any) -> tuple[bool, Any]:
    try:
        return True, call(ctx)
    except BaseException as exc:  # raised in the caller's thread, after the others
        return False, exc


def _results(outcomes: Sequence[tuple[bool, Any]]) -> list[Any]:
    for ok, value in outcomes:
        if not ok:
            raise value
    return [value for _, value in outcomes]
