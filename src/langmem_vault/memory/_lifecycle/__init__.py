"""Lifecycle: how memories change after they are written.

Feedback (``memory_feedback``, ``rate_turn``), consolidation (the sans-IO cycle and its
drivers), its clusters and its judge (offline rules, ``ModelJudge``). The layers and the
utility fold they act on belong to the memory model (``memory.layers``, ``memory.utility``):
a memory's ``layer`` is one of its fields, and recall folds pending utility on every read.
"""
