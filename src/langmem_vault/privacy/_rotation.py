"""Key rotation: re-seal every private fact under the current key, in atomic batches.

The sealing primitive is :mod:`langmem_vault.memory._sealing` (how a private memory is
stored); rotation is an operator's task over the whole store, so it lives here.

>>> report = rotate_keys(store, Keyring.from_env())  # doctest: +SKIP
>>> report.resealed, report.failed  # doctest: +SKIP
(12, [])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.store.base import BaseStore, PutOp, SearchOp

from langmem_vault.db._steps import arun_steps, run_steps
from langmem_vault.db._store_plans import Batch, StorePlan
from langmem_vault.memory._sealing import DecryptionError, Keyring, is_sealed
from langmem_vault.memory._writes import memory_put

__all__ = ["RotationReport", "arotate_keys", "rotate_keys"]


@dataclass
class RotationReport:
    """What :func:`rotate_keys` did: memories re-sealed, sealed for the first time, failed."""

    resealed: int = 0
    sealed: int = 0
    batches: int = 0
    failed: list[tuple[tuple[str, ...], str, str]] = field(default_factory=list)


def _rotate_plan(
    keyring: Keyring, prefix: tuple[str, ...], batch_size: int
) -> StorePlan[RotationReport]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    report = RotationReport()
    # Each round reads the next private facts not yet under the current key; rewritten ones
    # stop matching the filter, so the offset only steps over the ones left as they were
    # (failures, and current ones on a store whose filter ignores $ne).
    wanted = {"private": True, "enc_kid": {"$ne": keyring.current}}
    skip = 0
    while True:
        (items,) = yield Batch([SearchOp(prefix, filter=wanted, limit=batch_size, offset=skip)])
        if not items:
            return report
        todo = [i for i in items if i.value.get("enc_kid") != keyring.current]
        skip += len(items) - len(todo)
        ops: list[PutOp] = []
        for item in todo:
            ns = tuple(item.namespace)
            try:
                # The write rule seals it under the current key and drops any index.
                put = memory_put(ns, item.key, item.value, kind="semantic", keyring=keyring)
            except (DecryptionError, ValueError) as exc:
                report.failed.append((ns, item.key, str(exc)))
                skip += 1
                continue
            if is_sealed(item.value):
                report.resealed += 1
            else:
                report.sealed += 1
            ops.append(put)
        if ops:
            yield Batch(ops)  # one batch: atomic on VaultStore
            report.batches += 1


def rotate_keys(
    store: BaseStore,
    keyring: Keyring,
    *,
    prefix: tuple[str, ...] = ("memories",),
    batch_size: int = 100,
) -> RotationReport:
    """Re-seal every private fact under ``prefix`` with the current key, in atomic batches.

    Run it after making a new key current (the old one still in the keyring to read); rerun
    safely after a crash: finished batches are not redone.

    >>> report = rotate_keys(store, Keyring.from_env())  # doctest: +SKIP
    """
    return run_steps(_rotate_plan(keyring, prefix, batch_size), store)


async def arotate_keys(
    store: BaseStore,
    keyring: Keyring,
    *,
    prefix: tuple[str, ...] = ("memories",),
    batch_size: int = 100,
) -> RotationReport:
    """Async :func:`rotate_keys`."""
    return await arun_steps(_rotate_plan(keyring, prefix, batch_size), store)
