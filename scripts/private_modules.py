"""The private module layout (issue 24): internal modules carry a leading underscore.

``MODULES`` maps each old dotted module to its private name; it was generated once from the
tree and is kept here as data, so a branch made before the rename can be brought over:

    python scripts/private_modules.py --rewrite src tests bench examples graphs *.md *.json

rewrites every ``langmem_vault.old.path`` (imports, strings, mock targets, ``python -m``),
``langmem_vault/old/path`` (langgraph.json's ``./src/.../x.py:graph``, notebooks) and the
package-relative ``room/old.py`` file names of the docs. ``--move`` does the ``git mv`` of the
files themselves (only where the old file still exists). Both are idempotent: a private path
never matches an old one, so a second run changes nothing.

In Python files, ``from langmem_vault.room import module`` (a module imported by name from its
package) becomes ``from langmem_vault.room import _module as module``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

MODULES = {
    "langmem_vault.api.app": "langmem_vault.api._app",
    "langmem_vault.api.auth": "langmem_vault.api._auth",
    "langmem_vault.api.dashboard": "langmem_vault.api._dashboard",
    "langmem_vault.api.deps": "langmem_vault.api._deps",
    "langmem_vault.api.errors": "langmem_vault.api._errors",
    "langmem_vault.api.guards": "langmem_vault.api._guards",
    "langmem_vault.api.insights": "langmem_vault.api._insights",
    "langmem_vault.api.instructions": "langmem_vault.api._instructions",
    "langmem_vault.api.jobs": "langmem_vault.api._jobs",
    "langmem_vault.api.mcp_http": "langmem_vault.api._mcp_http",
    "langmem_vault.api.memories": "langmem_vault.api._memories",
    "langmem_vault.api.origin": "langmem_vault.api._origin",
    "langmem_vault.api.privacy": "langmem_vault.api._privacy",
    "langmem_vault.api.resources": "langmem_vault.api._resources",
    "langmem_vault.api.serve": "langmem_vault.api._serve",
    "langmem_vault.api.sessions": "langmem_vault.api._sessions",
    "langmem_vault.checkpointers.aio": "langmem_vault.checkpointers._aio",
    "langmem_vault.checkpointers.base": "langmem_vault.checkpointers._base",
    "langmem_vault.checkpointers.codec": "langmem_vault.checkpointers._codec",
    "langmem_vault.checkpointers.compression": "langmem_vault.checkpointers._compression",
    "langmem_vault.checkpointers.config": "langmem_vault.checkpointers._config",
    "langmem_vault.checkpointers.decoded": "langmem_vault.checkpointers._decoded",
    "langmem_vault.checkpointers.delta": "langmem_vault.checkpointers._delta",
    "langmem_vault.checkpointers.elements": "langmem_vault.checkpointers._elements",
    "langmem_vault.checkpointers.maintenance": "langmem_vault.checkpointers._maintenance",
    "langmem_vault.checkpointers.msgpack_frames": "langmem_vault.checkpointers._msgpack_frames",
    "langmem_vault.checkpointers.msgpack_load": "langmem_vault.checkpointers._msgpack_load",
    "langmem_vault.checkpointers.owners": "langmem_vault.checkpointers._owners",
    "langmem_vault.checkpointers.pages": "langmem_vault.checkpointers._pages",
    "langmem_vault.checkpointers.put": "langmem_vault.checkpointers._put",
    "langmem_vault.checkpointers.queries": "langmem_vault.checkpointers._queries",
    "langmem_vault.checkpointers.sync": "langmem_vault.checkpointers._sync",
    "langmem_vault.checkpointers.text": "langmem_vault.checkpointers._text",
    "langmem_vault.checkpointers.writes": "langmem_vault.checkpointers._writes",
    "langmem_vault.cli.admin": "langmem_vault.cli._admin",
    "langmem_vault.cli.app": "langmem_vault.cli._app",
    "langmem_vault.cli.context": "langmem_vault.cli._context",
    "langmem_vault.cli.eval": "langmem_vault.cli._eval",
    "langmem_vault.cli.instructions": "langmem_vault.cli._instructions",
    "langmem_vault.cli.jobs": "langmem_vault.cli._jobs",
    "langmem_vault.cli.mcp": "langmem_vault.cli._mcp",
    "langmem_vault.cli.memories": "langmem_vault.cli._memories",
    "langmem_vault.db.connection": "langmem_vault.db._connection",
    "langmem_vault.db.embedded": "langmem_vault.db._embedded",
    "langmem_vault.db.health": "langmem_vault.db._health",
    "langmem_vault.db.jsonb": "langmem_vault.db._jsonb",
    "langmem_vault.db.migrations": "langmem_vault.db._migrations",
    "langmem_vault.db.pools": "langmem_vault.db._pools",
    "langmem_vault.db.runner": "langmem_vault.db._runner",
    "langmem_vault.db.sql": "langmem_vault.db._sql",
    "langmem_vault.db.steps": "langmem_vault.db._steps",
    "langmem_vault.db.store_plans": "langmem_vault.db._store_plans",
    "langmem_vault.db.vectors": "langmem_vault.db._vectors",
    "langmem_vault.demo": "langmem_vault._demo",
    "langmem_vault.doctor": "langmem_vault._doctor",
    "langmem_vault.eval.answers": "langmem_vault.eval._answers",
    "langmem_vault.eval.locomo": "langmem_vault.eval._locomo",
    "langmem_vault.eval.locomo_data": "langmem_vault.eval._locomo_data",
    "langmem_vault.eval.metrics": "langmem_vault.eval._metrics",
    "langmem_vault.eval.plot": "langmem_vault.eval._plot",
    "langmem_vault.extraction.aliases": "langmem_vault.extraction._aliases",
    "langmem_vault.extraction.apply": "langmem_vault.extraction._apply",
    "langmem_vault.extraction.checks": "langmem_vault.extraction._checks",
    "langmem_vault.extraction.clauses": "langmem_vault.extraction._clauses",
    "langmem_vault.extraction.messages": "langmem_vault.extraction._messages",
    "langmem_vault.extraction.payload": "langmem_vault.extraction._payload",
    "langmem_vault.extraction.prompt": "langmem_vault.extraction._prompt",
    "langmem_vault.extraction.protocol": "langmem_vault.extraction._protocol",
    "langmem_vault.extraction.reconcile": "langmem_vault.extraction._reconcile",
    "langmem_vault.extraction.redaction": "langmem_vault.extraction._redaction",
    "langmem_vault.extraction.schema": "langmem_vault.extraction._schema",
    "langmem_vault.extraction.span": "langmem_vault.extraction._span",
    "langmem_vault.graphs.builder": "langmem_vault.graphs._builder",
    "langmem_vault.graphs.options": "langmem_vault.graphs._options",
    "langmem_vault.graphs.state": "langmem_vault.graphs._state",
    "langmem_vault.integrations.middleware": "langmem_vault.integrations._middleware",
    "langmem_vault.integrations.retriever": "langmem_vault.integrations._retriever",
    "langmem_vault.integrations.tools": "langmem_vault.integrations._tools",
    "langmem_vault.jobs.background": "langmem_vault.jobs._background",
    "langmem_vault.jobs.consolidation": "langmem_vault.jobs._consolidation",
    "langmem_vault.jobs.dead_letter": "langmem_vault.jobs._dead_letter",
    "langmem_vault.jobs.lease": "langmem_vault.jobs._lease",
    "langmem_vault.jobs.plans": "langmem_vault.jobs._plans",
    "langmem_vault.jobs.queue": "langmem_vault.jobs._queue",
    "langmem_vault.jobs.worker": "langmem_vault.jobs._worker",
    "langmem_vault.mcp.server": "langmem_vault.mcp._server",
    "langmem_vault.memory.conditions": "langmem_vault.memory._conditions",
    "langmem_vault.memory.keys": "langmem_vault.memory._keys",
    "langmem_vault.memory.layers": "langmem_vault.memory._layers",
    "langmem_vault.memory.lifecycle": "langmem_vault.memory._lifecycle",
    "langmem_vault.memory.models": "langmem_vault.memory._models",
    "langmem_vault.memory.namespaces": "langmem_vault.memory._namespaces",
    "langmem_vault.memory.recall": "langmem_vault.memory._recall",
    "langmem_vault.memory.sealing": "langmem_vault.memory._sealing",
    "langmem_vault.memory.utility": "langmem_vault.memory._utility",
    "langmem_vault.memory.vault": "langmem_vault.memory._vault",
    "langmem_vault.memory.writes": "langmem_vault.memory._writes",
    "langmem_vault.nlp": "langmem_vault._nlp",
    "langmem_vault.nodes.common": "langmem_vault.nodes._common",
    "langmem_vault.nodes.compact": "langmem_vault.nodes._compact",
    "langmem_vault.nodes.degrade": "langmem_vault.nodes._degrade",
    "langmem_vault.nodes.documents": "langmem_vault.nodes._documents",
    "langmem_vault.nodes.extract": "langmem_vault.nodes._extract",
    "langmem_vault.nodes.inject": "langmem_vault.nodes._inject",
    "langmem_vault.nodes.reconcile": "langmem_vault.nodes._reconcile",
    "langmem_vault.nodes.respond": "langmem_vault.nodes._respond",
    "langmem_vault.offline.chat": "langmem_vault.offline._chat",
    "langmem_vault.offline.extractor": "langmem_vault.offline._extractor",
    "langmem_vault.offline.model": "langmem_vault.offline._model",
    "langmem_vault.privacy.audit": "langmem_vault.privacy._audit",
    "langmem_vault.privacy.redaction": "langmem_vault.privacy._redaction",
    "langmem_vault.privacy.rotation": "langmem_vault.privacy._rotation",
    "langmem_vault.privacy.subject_rights": "langmem_vault.privacy._subject_rights",
    "langmem_vault.run_config": "langmem_vault._run_config",
    "langmem_vault.service.agent": "langmem_vault.service._agent",
    "langmem_vault.service.analytics": "langmem_vault.service._analytics",
    "langmem_vault.service.base": "langmem_vault.service._base",
    "langmem_vault.service.categories": "langmem_vault.service._categories",
    "langmem_vault.service.errors": "langmem_vault.service._errors",
    "langmem_vault.service.facade": "langmem_vault.service._facade",
    "langmem_vault.service.instructions": "langmem_vault.service._instructions",
    "langmem_vault.service.jobs": "langmem_vault.service._jobs",
    "langmem_vault.service.memories": "langmem_vault.service._memories",
    "langmem_vault.service.privacy": "langmem_vault.service._privacy",
    "langmem_vault.service.records": "langmem_vault.service._records",
    "langmem_vault.service.stats": "langmem_vault.service._stats",
    "langmem_vault.service.threads": "langmem_vault.service._threads",
    "langmem_vault.service.trace": "langmem_vault.service._trace",
    "langmem_vault.store.aio": "langmem_vault.store._aio",
    "langmem_vault.store.base": "langmem_vault.store._base",
    "langmem_vault.store.counters": "langmem_vault.store._counters",
    "langmem_vault.store.filters": "langmem_vault.store._filters",
    "langmem_vault.store.lexemes": "langmem_vault.store._lexemes",
    "langmem_vault.store.mirrors": "langmem_vault.store._mirrors",
    "langmem_vault.store.plans": "langmem_vault.store._plans",
    "langmem_vault.store.ranking": "langmem_vault.store._ranking",
    "langmem_vault.store.reembed": "langmem_vault.store._reembed",
    "langmem_vault.store.scopes": "langmem_vault.store._scopes",
    "langmem_vault.store.sql": "langmem_vault.store._sql",
    "langmem_vault.store.sync": "langmem_vault.store._sync",
    "langmem_vault.store.validation": "langmem_vault.store._validation",
}

# The rooms' public packages and the few modules users and langgraph.json import by path.
PUBLIC_MODULES = (
    "langmem_vault.embeddings",
    "langmem_vault.studio",
    "langmem_vault.api.server",
    "langmem_vault.api.langgraph_auth",
)

SUFFIXES = {
    ".py",
    ".pyi",
    ".md",
    ".json",
    ".ipynb",
    ".toml",
    ".txt",
    ".cfg",
    ".ini",
    ".yml",
    ".yaml",
}
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".ruff_cache"}


def _patterns() -> list[tuple[re.Pattern[str], str]]:
    patterns = []
    # longest first, so a nested path is never cut by its parent's pattern
    for old, new in sorted(MODULES.items(), key=lambda kv: -len(kv[0])):
        for sep in (".", "/"):
            patterns.append(
                (
                    re.compile(r"(?<![\w.])" + re.escape(old.replace(".", sep)) + r"(?![\w])"),
                    new.replace(".", sep),
                )
            )
        # the docs' package-relative file names: store/plans.py, privacy/redaction/
        rel_old = old.removeprefix("langmem_vault.").replace(".", "/")
        if "/" in rel_old:
            rel_new = new.removeprefix("langmem_vault.").replace(".", "/")
            patterns.append(
                (re.compile(r"(?<![\w/.])" + re.escape(rel_old) + r"(?=\.py\b|/)"), rel_new)
            )
    return patterns


PATTERNS = _patterns()
SRC = Path(__file__).resolve().parents[1] / "src"


def rewrite_text(text: str, python: bool = False) -> str:
    if python:
        text = _module_imports(text)
    for pattern, new in PATTERNS:
        text = pattern.sub(new, text)
    return text


def _exported(package: str) -> set[str]:
    """The names ``package``'s ``__init__`` binds or lists (from this checkout's src)."""
    init = SRC.joinpath(*package.split("."), "__init__.py")
    if not init.exists():
        return set()
    tree = ast.parse(init.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Name | ast.FunctionDef | ast.ClassDef):
            names.add(node.id if isinstance(node, ast.Name) else node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __all__ and the lazy tables
    return names


def _module_imports(text: str) -> str:
    """``from pkg import mod`` -> ``from pkg import _mod as mod`` for each old module ``mod``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                new = MODULES.get(f"{node.module}.{alias.name}")
                # a package that exports a function of its module's name gives the function
                if new is not None and alias.name not in _exported(node.module):
                    private = new.rpartition(".")[2]
                    edits.append((alias, f"{private} as {alias.asname or alias.name}"))
    lines = text.splitlines(keepends=True)
    for alias, new_text in sorted(
        edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True
    ):
        line = lines[alias.lineno - 1]
        lines[alias.lineno - 1] = line[: alias.col_offset] + new_text + line[alias.end_col_offset :]
    return "".join(lines)


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found += [
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix in SUFFIXES
                and not SKIP_DIRS.intersection(p.parts)
                and p.resolve() != Path(__file__).resolve()
            ]
        elif path.is_file():
            found.append(path)
    return found


def rewrite(paths: list[str]) -> list[Path]:
    """Rewrite old module paths in ``paths`` (files or directories); the files changed."""
    changed = []
    for path in _files(paths):
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, python=path.suffix in {".py", ".pyi"})
        if new != text:
            if path.suffix == ".ipynb":
                json.loads(new)  # a notebook stays valid JSON
            path.write_text(new, "utf-8")
            changed.append(path)
    return changed


def move(src: Path) -> list[str]:
    """``git mv`` each old module file or package under ``src`` to its private name."""
    moved = []
    for old, new in MODULES.items():
        rel_old = old.replace(".", "/")
        rel_new = new.replace(".", "/")
        for suffix in (".py", ""):
            before, after = src / (rel_old + suffix), src / (rel_new + suffix)
            if before.exists() and (suffix or before.is_dir()):
                subprocess.run(["git", "mv", str(before), str(after)], check=True)
                moved.append(f"{before} -> {after}")
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewrite", nargs="+", metavar="PATH", default=[])
    parser.add_argument("--move", metavar="SRC", help="the src directory (git mv the modules)")
    args = parser.parse_args(argv)
    if not args.rewrite and not args.move:
        parser.error("nothing to do: give --rewrite PATH... and/or --move SRC")
    if args.move:
        for line in move(Path(args.move)):
            print("moved", line)
    for path in rewrite(args.rewrite):
        print("rewrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
