"""What connections cost the write path, in counts: statements, round trips, rows, embedded
texts and spaCy parses per fact.

Data: the 70 first-person statements of bench/data/offline/self_statements.toml, each its
own span through ``OfflineExtractor`` (with spaCy) and ``apply_extraction`` on VaultStore
(fresh embedded server, local embeddings). Run twice in the same process: **without** links
(each proposal's entities and relations dropped before reconcile: the write path as it was)
and **with** them. Counts, not times (timings on a shared machine are noise): every SQL
statement the store sends, every round trip (a pipelined group counts once), rows in the
entity tables, texts embedded.

    python bench/entity_cost.py
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, temp_server_uri
from bench.offline_extract_bench import load_statements


class Counts:
    """Statements and round trips sent through the runtime's SQL steps."""

    def __init__(self) -> None:
        self.statements = 0
        self.round_trips = 0

    def install(self) -> None:
        from langmem_vault.db import _runner as runner

        query_run, pipe_run = runner.Query.run, runner.Pipelined.run
        counts = self

        def run_query(step: Any, ctx: Any) -> Any:
            counts.statements += 1
            counts.round_trips += 1
            return query_run(step, ctx)

        def run_pipelined(step: Any, ctx: Any) -> Any:
            counts.statements += len(step.queries)
            counts.round_trips += 1
            return pipe_run(step, ctx)

        runner.Query.run = run_query  # type: ignore[method-assign]
        runner.Pipelined.run = run_pipelined  # type: ignore[method-assign]


class CountingEmbeddings(Embeddings):
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return list(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))


def main() -> None:
    from langchain_core.messages import HumanMessage

    from langmem_vault.embeddings import local_embeddings
    from langmem_vault.extraction._aliases import AliasMap
    from langmem_vault.extraction._checks import check_proposal
    from langmem_vault.extraction._reconcile import apply_extraction
    from langmem_vault.offline import OfflineExtractor
    from langmem_vault.store import VaultStore

    statements = [row["say"] for row in load_statements()]
    extractor = OfflineExtractor()
    extractor.warm_up()
    started = time.process_time()
    extractions = []
    for text in statements:
        messages = [HumanMessage(text, id=str(uuid.uuid4()))]
        checked = check_proposal(extractor.extract(messages, []), messages, AliasMap())
        extractions.append(checked.extraction)
    cpu = time.process_time() - started
    facts = [f for e in extractions for f in e.facts]
    print(
        f"{len(statements)} statements, {len(facts)} facts, "
        f"{sum(bool(f.entities) for f in facts)} naming an entity, "
        f"{sum(len(f.entities) for f in facts)} entities, "
        f"{sum(len(a) for f in facts for a in (e.aliases for e in f.entities))} aliases, "
        f"{sum(len(f.relations) for f in facts)} relations; "
        f"extraction {1000 * cpu / max(len(facts), 1):.1f} ms CPU per fact, with one spaCy "
        "parse of each fact for its entities"
    )

    uri = temp_server_uri()
    counts = Counts()
    counts.install()
    rows = []
    for label, keep in (("without links", False), ("with links", True)):
        embeddings = CountingEmbeddings(local_embeddings())
        index = {"dims": 384, "embed": embeddings, "fields": ["text"]}
        schema = f"cost_{uuid.uuid4().hex[:8]}"
        with VaultStore.from_conn_string(uri, schema=schema, index=index) as store:  # type: ignore[arg-type]
            store.setup()
            counts.statements = counts.round_trips = 0
            for extraction in extractions:
                if not keep:
                    extraction = extraction.model_copy(
                        update={
                            "facts": [
                                f.model_copy(update={"entities": [], "relations": []})
                                for f in extraction.facts
                            ]
                        }
                    )
                apply_extraction(store, extraction, config={"configurable": {"user_id": "u"}})
            with store.conn.connection() as conn:
                tables = ("entities", "entity_aliases", "entity_mentions", "entity_relations")
                linked = {
                    t: conn.execute(f"SELECT count(*) FROM {schema}.{t}").fetchone()[0]  # type: ignore[index]
                    for t in tables
                }
        n = len(extractions)
        rows.append(
            [
                label,
                f"{counts.statements / n:.2f}",
                f"{counts.round_trips / n:.2f}",
                f"{embeddings.texts / n:.2f}",
                " / ".join(str(linked[t]) for t in tables),
            ]
        )
    print_table(
        [
            "write path",
            "statements per span",
            "round trips per span",
            "texts embedded per span",
            "entities / aliases / mentions / relations",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
