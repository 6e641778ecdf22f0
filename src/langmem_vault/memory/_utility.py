"""Utility feedback: how useful a fact proved, learned from citations and explicit signals.

Signals, all written as additions to the memory's usage record (so concurrent writers never
lose one, see :mod:`langmem_vault.memory._recall.usage`):

- a **citation** (the model used the fact: ``[M1]``) counts ``+cite_gain`` (0.1);
- a fact **injected but not cited** in a turn where citations were tracked (``uncited``)
  counts ``-miss_loss`` (a little: 0.02);
- an **explicit** signal
  (:func:`~langmem_vault.memory._lifecycle.feedback.memory_feedback`, a thumbs up
  or down on a turn) counts more: ``+0.3`` / ``-0.3`` by default.

The utility is folded from those signals with **momentum**: ``v = m x v + (1 - m) x g`` and
``utility += v`` (``g``: the signals since the last fold), so one signal moves a score by at
most ``(1 - m) x g`` at once. The lifecycle cycle (the consolidation job) persists each fold
as additions to the record (``utility_shift``, ``velocity`` and the ``folded_*`` counts); a
reader folds what is still pending on the fly, so feedback counts in the very next turn.
A memory the cycle finds **unused** (no injection and no signal since the last cycle, while
its user was active) decays: ``utility x (1 - decay)`` (5% by default).

>>> policy = UtilityPolicy()
>>> current_utility(0.5, {"citations": 1})
0.55
>>> current_utility(0.5, {"signal": 0.3})
0.65
>>> fold_increments(0.5, {}, policy, unused=True)["utility_shift"]
-0.025
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_UTILITY",
    "UtilityPolicy",
    "current_utility",
    "fold_increments",
    "pending_activity",
    "signal_amount",
]

#: the signal counters of a usage record and their folded shadows
_COUNTERS = ("access_count", "citations", "uncited", "signal")
#: the fields that can make a gradient (injections alone move no utility)
_GRADIENT_FIELDS = frozenset(
    name for signal in ("citations", "uncited", "signal") for name in (signal, f"folded_{signal}")
)


@dataclass(frozen=True)
class UtilityPolicy:
    """The weights of the signals, the momentum and the decay of unused memories.

    >>> UtilityPolicy(momentum=1.5)
    Traceback (most recent call last):
    ...
    ValueError: momentum must be in [0, 1), got 1.5
    """

    cite_gain: float = 0.1
    miss_loss: float = 0.02
    up: float = 0.3
    down: float = -0.3
    momentum: float = 0.5
    decay: float = 0.05

    def __post_init__(self) -> None:
        for name in ("cite_gain", "miss_loss", "up"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not isinstance(self.down, int | float) or not -1.0 <= self.down <= 0.0:
            raise ValueError(f"down must be in [-1, 0], got {self.down!r}")
        if not isinstance(self.momentum, int | float) or not 0.0 <= self.momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        if not isinstance(self.decay, int | float) or not 0.0 <= self.decay < 1.0:
            raise ValueError(f"decay must be in [0, 1), got {self.decay!r}")


DEFAULT_UTILITY = UtilityPolicy()


def signal_amount(signal: str | float | bool, policy: UtilityPolicy = DEFAULT_UTILITY) -> float:
    """An explicit signal as a number: ``"up"``/``True`` -> ``policy.up``, ``"down"``/``False``
    -> ``policy.down``, or a number in [-1, 1].

    >>> signal_amount("down")
    -0.3
    >>> signal_amount(2)
    Traceback (most recent call last):
    ...
    ValueError: signal must be 'up', 'down', a bool or a number in [-1, 1], got 2
    """
    if signal in ("up", True):
        return policy.up
    if signal in ("down", False):
        return policy.down
    if isinstance(signal, int | float) and math.isfinite(signal) and -1.0 <= signal <= 1.0:
        return float(signal)
    raise ValueError(f"signal must be 'up', 'down', a bool or a number in [-1, 1], got {signal!r}")


def _num(usage: Mapping[str, Any], name: str) -> float:
    value = usage.get(name, 0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _pending(usage: Mapping[str, Any]) -> dict[str, float]:
    return {name: _num(usage, name) - _num(usage, f"folded_{name}") for name in _COUNTERS}


def pending_activity(usage: Mapping[str, Any] | None) -> bool:
    """Whether the memory was injected, cited or rated since the last fold."""
    return any(abs(v) > 1e-12 for v in _pending(usage or {}).values())


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _step(
    base: float, usage: Mapping[str, Any], policy: UtilityPolicy
) -> tuple[float, float, float]:
    """(utility before, utility after, velocity after) of folding the pending signals."""
    before = _clip(base + _num(usage, "utility_shift"))
    pending = _pending(usage)
    gradient = (
        policy.cite_gain * pending["citations"]
        - policy.miss_loss * pending["uncited"]
        + pending["signal"]
    )
    velocity = _num(usage, "velocity")
    if abs(gradient) < 1e-12:
        return before, before, velocity
    velocity = policy.momentum * velocity + (1.0 - policy.momentum) * gradient
    return before, _clip(before + velocity), velocity


def current_utility(
    base: float, usage: Mapping[str, Any] | None, policy: UtilityPolicy = DEFAULT_UTILITY
) -> float:
    """The utility a reader sees: the folded utility, with the pending signals folded in."""
    usage = usage or {}
    if _GRADIENT_FIELDS.isdisjoint(usage):
        # Most records only count injections (inject reads ~50 a turn): no gradient, so the
        # folded utility as it is, as _step would return it, without its bookkeeping.
        return round(_clip(float(base) + _num(usage, "utility_shift")), 6)
    _, after, _ = _step(float(base), usage, policy)
    return round(after, 6)


def fold_increments(
    base: float,
    usage: Mapping[str, Any] | None,
    policy: UtilityPolicy = DEFAULT_UTILITY,
    *,
    unused: bool = False,
) -> dict[str, float]:
    """The additions to a usage record that persist one fold (empty: nothing to change).

    ``unused``: the cycle found no activity for this memory while its user was active, so its
    utility decays and its momentum stops. Folding twice changes nothing the second time: the
    ``folded_*`` counts catch up with the signal counts.
    """
    usage = usage or {}
    pending = _pending(usage)
    before, after, velocity = _step(float(base), usage, policy)
    if any(abs(v) > 1e-12 for v in pending.values()):
        out = {f"folded_{name}": amount for name, amount in pending.items() if amount}
    elif unused and before > 0.0:
        out = {}
        after, velocity = before * (1.0 - policy.decay), 0.0
    else:
        return {}
    # The shift is measured from the unclipped sum, so base + shift lands exactly on `after`.
    shift = after - (float(base) + _num(usage, "utility_shift"))
    if abs(shift) > 1e-12:
        out["utility_shift"] = round(shift, 9)
    change = velocity - _num(usage, "velocity")
    if abs(change) > 1e-12:
        out["velocity"] = round(change, 9)
    return out
