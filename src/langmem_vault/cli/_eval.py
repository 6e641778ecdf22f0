"""``langmem-vault eval locomo FILE``: the LoCoMo evaluation on a file the user supplies
(:func:`langmem_vault.eval._locomo.run_locomo`), with a table by category, a plot, a progress
bar and a JSON file of every answer.

The memories go into a scratch schema (dropped at the end) unless ``--schema`` names one;
``--reference postgres`` runs langgraph's ``PostgresStore`` beside it, in a scratch schema of
its own, on the same embeddings (each text is embedded once, for both stores).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.embeddings import Embeddings
from rich.markup import escape

from langmem_vault.cli._context import DsnOption, err, fail, out, progress, table

__all__ = ["register"]

evaluate = typer.Typer(help="Evaluate memory on a benchmark file.", no_args_is_help=True)

REFERENCES = ("postgres",)
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class CachedEmbeddings(Embeddings):
    """Each distinct text embedded once, whichever store asks: the reference gets the very
    vectors the vault got, and the run pays for one pass."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.cache: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            self.cache.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self.cache[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]


def pick(conversations: Sequence[Any], spec: str | None) -> list[Any]:
    """The conversations ``--conversations`` names by index: ``0-4``, ``7``, ``0-2,5``."""
    if spec is None:
        return list(conversations)
    chosen: list[int] = []
    for part in spec.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            fail(f"--conversations: expected indexes like 0-4 or 0,3; got {part!r}")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if last < first or last >= len(conversations):
            fail(f"--conversations: {part!r} is outside 0-{len(conversations) - 1}")
        chosen.extend(range(first, last + 1))
    return [conversations[i] for i in dict.fromkeys(chosen)]


@contextmanager
def scratch_schema(uri: str, prefix: str, keep: bool = False) -> Iterator[str]:
    """A new schema, dropped (with what it holds) on exit unless ``keep``."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield name
    finally:
        if not keep:
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{name}" CASCADE')


def open_reference(stack: ExitStack, uri: str, embed: Embeddings) -> Any:
    """langgraph's PostgresStore in a scratch schema (pgvector's own schema stays on the
    search path), set up."""
    import psycopg

    from langmem_vault.embeddings import default_index

    try:
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        fail("--reference postgres needs langgraph-checkpoint-postgres (pip install it)")
    schema = stack.enter_context(scratch_schema(uri, "locomo_reference"))
    with psycopg.connect(uri, autocommit=True) as conn:
        row = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
            " WHERE e.extname = 'vector'"
        ).fetchone()
    # Plain names (ours is lower-case hex; pgvector's is an identifier): options split on
    # spaces and do not take quotes.
    path = schema + (f",{row[0]}" if row else "")
    conninfo = psycopg.conninfo.make_conninfo(uri, options=f"-c search_path={path}")
    index: Any = {**default_index(embed), "fields": ["text"]}
    store = stack.enter_context(PostgresStore.from_conn_string(conninfo, index=index))
    store.setup()
    return store


def load_model(spec: str) -> Any:
    """An ``init_chat_model`` string as a chat model (tests replace this)."""
    from langmem_vault.extraction._protocol import load_model as load

    return load(spec)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or not b else f"{a / b:.2f}x"


def print_table(rows: Sequence[Any], k: int, reference: str | None, answered: bool) -> None:
    """The Rich table by category."""
    columns = ["category", "questions", f"recall@{k}"]
    if reference:
        columns += [f"{reference} recall@{k}", "ratio"]
    columns += ["coverage", "tokens"]
    if reference:
        columns += [f"{reference} coverage", f"{reference} tokens"]
    if answered:
        columns += ["J", "F1"]
    lines = []
    for r in rows:
        line = [r.name, r.questions, _fmt(r.recall)]
        if reference:
            line += [_fmt(r.reference_recall), _ratio(r.recall, r.reference_recall)]
        line += [_fmt(r.coverage), _fmt(r.tokens, 0)]
        if reference:
            line += [_fmt(r.reference_coverage), _fmt(r.reference_tokens, 0)]
        if answered:
            line += [_fmt(r.j), _fmt(r.f1)]
        lines.append(line)
    table(f"LoCoMo by category (recall@{k} of the evidence turns)", columns, lines)


def locomo(
    file: Annotated[Path, typer.Argument(help="a LoCoMo-format JSON file (locomo10.json)")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="memories per question")] = 10,
    pipeline: Annotated[
        bool, typer.Option(help="extract facts from each turn (offline, or --model)")
    ] = False,
    model: Annotated[
        str | None, typer.Option(help="init_chat_model string: answers, judges, extracts")
    ] = None,
    judge: Annotated[str | None, typer.Option(help="the judge (default: --model)")] = None,
    reference: Annotated[
        str | None, typer.Option(help="a store to compare with: postgres (PostgresStore)")
    ] = None,
    conversations: Annotated[
        str | None, typer.Option(help="conversation indexes, e.g. 0-4 (default: all)")
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=50, help="inject's token budget")] = 1000,
    entities: Annotated[
        bool, typer.Option(help="name each stored turn's entities (spaCy) for recall to expand")
    ] = False,
    output: Annotated[Path, typer.Option(help="JSON file of every answer")] = Path(
        "locomo-results.json"
    ),
    plot: Annotated[
        Path, typer.Option(help="the figure (written when matplotlib is installed)")
    ] = Path("locomo-results.png"),
    dsn: DsnOption = None,
    schema: Annotated[
        str | None, typer.Option(help="schema for the memories (default: a scratch schema)")
    ] = None,
) -> None:
    """Evaluate memory on a LoCoMo-format FILE: evidence recall@k, answer coverage and tokens
    by category; with --model also J (LLM-as-judge) and F1."""
    from langmem_vault.db._embedded import EmbeddedServerError, resolve_dsn
    from langmem_vault.embeddings import default_index, local_embeddings
    from langmem_vault.eval._locomo import run_locomo, steps
    from langmem_vault.eval._locomo_data import LocomoFormatError, load_locomo
    from langmem_vault.eval._plot import plot_available, save_plot
    from langmem_vault.offline import find_entities
    from langmem_vault.store import VaultStore

    if reference is not None and reference not in REFERENCES:
        fail(f"--reference: expected one of {', '.join(REFERENCES)}; got {reference!r}")
    if judge is not None and model is None:
        fail("--judge needs --model (the model that answers)")
    try:
        chosen = pick(load_locomo(file), conversations)
    except (OSError, LocomoFormatError) as exc:
        fail(f"{file}: {exc}")
    try:
        uri = resolve_dsn(dsn)
    except (ValueError, EmbeddedServerError) as exc:
        fail(f"dsn: {exc}", 1)
    embed = CachedEmbeddings(local_embeddings())
    chat = load_model(model) if model else None
    with ExitStack() as stack:
        name = schema or stack.enter_context(scratch_schema(uri, "locomo_eval"))
        try:
            vault_store = VaultStore.from_conn_string(uri, schema=name, index=default_index(embed))
        except ValueError as exc:
            fail(f"schema: {exc}")
        store = stack.enter_context(vault_store)
        store.setup()
        ref = open_reference(stack, uri, embed) if reference else None
        with progress("LoCoMo", steps(chosen)) as step:
            result = run_locomo(
                chosen,
                store,
                k=k,
                pipeline=pipeline,
                extractor=chat if pipeline else None,
                model=chat,
                judge=load_model(judge) if judge else None,
                reference=ref,
                max_tokens=max_tokens,
                entity_finder=find_entities if entities else None,
                on_step=step,
            )
    rows = result.by_category()
    print_table(rows, k, reference, answered=chat is not None)
    output.write_text(json.dumps(result.to_json(), indent=1, ensure_ascii=False, default=str))
    out.print(escape(f"every answer: {output}"))
    if plot_available():
        out.print(escape(f"plot: {save_plot(rows, plot, k=k)}"))
    else:
        err.print("no plot: matplotlib is not installed (pip install 'langmem-vault[eval]')")


def register(app: typer.Typer) -> None:
    """Add ``eval locomo`` to the root app."""
    evaluate.command("locomo")(locomo)
    app.add_typer(evaluate, name="eval")
