"""The evaluation's figure: recall@k and coverage by category, beside the reference.

matplotlib is optional (the ``[eval]`` extra): :func:`plot_available` says
whether it is installed, and :func:`save_plot` is only called when it is.

>>> from langmem_vault.eval._locomo import CategoryRow
>>> rows = [CategoryRow("single-hop", 2, 0.5, 1.0, 40.0, reference_recall=0.25)]
>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "locomo.png"
>>> save_plot(rows, out, k=10) == out and out.stat().st_size > 0 if plot_available() else True
True
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from langmem_vault.eval._locomo import CategoryRow

__all__ = ["plot_available", "save_plot"]


def plot_available() -> bool:
    """Whether matplotlib is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def save_plot(rows: Sequence[CategoryRow], path: Path, *, k: int) -> Path:
    """Bars of recall@k (and the reference's, when measured) and coverage per category."""
    import matplotlib

    matplotlib.use("Agg")  # files only: never a window
    import matplotlib.pyplot as plt

    series = [(f"recall@{k}", [r.recall for r in rows])]
    if any(r.reference_recall is not None for r in rows):
        series.append((f"reference recall@{k}", [r.reference_recall for r in rows]))
    series.append(("answer coverage", [r.coverage for r in rows]))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(1.6 * len(rows) + 2, 4))
    for i, (label, values) in enumerate(series):
        xs = [j + i * width for j in range(len(rows))]
        ax.bar(xs, [v or 0.0 for v in values], width, label=label)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(rows))])
    ax.set_xticklabels([f"{r.name}\n({r.questions})" for r in rows], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo by category")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
