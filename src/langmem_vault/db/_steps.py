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
import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["Call", "Embed", "Step", "Steps", "Within", "arun_steps", "run_steps"]

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
