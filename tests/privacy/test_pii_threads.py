"""The engines load once even when many threads ask first, and concurrent calls agree."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

from langmem_vault.privacy import RedactionPolicy, redact

TEXTS = [
    "My email is jane.doe@example.com and my password is hunter2",
    "I had lunch with Priya Patel yesterday",
    "card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00",
    "I prefer Python for data analysis",
    "Ship it to 742 Evergreen Terrace, Springfield, IL 62704",
    "I live in Lisbon and was born on March 3, 1985",
]

# A fresh interpreter, so the engines are not loaded yet: 8 threads released together all
# ask for them first. Built once means one object for all and one build call.
COLD_START = textwrap.dedent(
    """
    import threading
    from langmem_vault.privacy import redact
    from langmem_vault.privacy._redaction import engine

    assert not engine.engines_loaded()
    builds = []
    real_build = engine.build_analyzer

    def counting_build(*args, **kwargs):
        builds.append(threading.get_ident())
        return real_build(*args, **kwargs)

    engine.build_analyzer = counting_build
    barrier = threading.Barrier(8)
    seen, outputs = [], []

    def worker():
        barrier.wait()
        seen.append(id(engine.get_engines()))
        outputs.append(redact("mail me at jo@example.com").text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(len(builds), len(set(seen)), sorted(set(outputs)))
    """
)


def test_cold_start_from_many_threads_builds_the_engines_once() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", COLD_START], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "1 1 ['mail me at <EMAIL>']"


def test_concurrent_redactions_match_sequential_ones() -> None:
    policy = RedactionPolicy.redact_all()
    work = TEXTS * 20
    expected = [redact(t, policy=policy) for t in work]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda t: redact(t, policy=policy), work))
    assert [r.text for r in got] == [r.text for r in expected]
    assert [r.entities for r in got] == [r.entities for r in expected]


def test_importing_the_package_loads_neither_presidio_nor_spacy() -> None:
    code = (
        "import sys, langmem_vault.privacy; "
        "engine = 'langmem_vault.privacy._redaction.engine'; "
        "print(sorted(m for m in ('presidio_analyzer', 'spacy', engine) if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
