"""What a user (or an operator for them) may ask of their memories.

``consent`` (per-user settings and the extraction filter), ``portability`` (export and
import), ``erase`` (hard or soft erase, restore, purge) and ``gate`` (tiered, sanitised
answers for plugins).
"""
