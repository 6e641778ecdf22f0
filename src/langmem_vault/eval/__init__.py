"""Evaluations anyone can run on their own data: :mod:`.locomo` (LoCoMo-format files).

- :mod:`.locomo_data`: the file format, read into dataclasses;
- :mod:`.metrics`: recall, coverage and F1 as LoCoMo scores them;
- :mod:`.answers`: a model's answer from the injected block, and the judge's label;
- :mod:`.locomo`: :func:`~.locomo.run_locomo`, which runs it all;
- :mod:`.plot`: the figure (matplotlib, when installed).

>>> from langmem_vault.eval._locomo import run_locomo
>>> run_locomo.__name__
'run_locomo'
"""
