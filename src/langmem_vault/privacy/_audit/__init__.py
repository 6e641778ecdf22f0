"""The audit trail: who did what to which memory, when.

``log`` (the table and its sync/async writers), ``buffer`` (batched, off the hot path),
``store`` (a store wrapper that logs reads and writes), ``access`` (an access recorder that
logs injections and citations) and ``owners`` (whose memory a namespace holds).
"""
