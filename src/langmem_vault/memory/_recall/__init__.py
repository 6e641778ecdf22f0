"""Recall: which memories a turn gets and what is recorded about them.

Retrieval (the store reads), scoring (relevance, recency, utility, layer), private recall
(opening sealed facts for their owner), what was injected (the memories a model saw, as data)
and usage (access and citation counters kept beside each memory).
"""
