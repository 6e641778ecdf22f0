"""Evaluations anyone can run on their own data: :mod:`.locomo` (LoCoMo-format files).

- :mod:`.locomo_data`: the file format, read into dataclasses;
- :mod:`.metrics`: recall, coverage and F1 as LoCoMo scores them;
- :mod:`.answers`: a model's answer from the injected block, and the judge's label;
- :mod:`.locomo`: :func:`~.locomo.run_locomo`, which runs it all;
- :mod:`.plot`: the figure (matplotlib, when installed).

>>> from langmem_vault.eval import run_locomo
>>> run_locomo.__name__
'run_locomo'
"""

from typing import Any

from langmem_vault._lazy import LazyNames

__all__ = ["LocomoFormatError", "load_locomo", "parse_locomo", "run_locomo"]

_NAMES = LazyNames(
    globals(),
    {
        "langmem_vault.eval._locomo": ("run_locomo",),
        "langmem_vault.eval._locomo_data": ("LocomoFormatError", "load_locomo", "parse_locomo"),
    },
)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()
