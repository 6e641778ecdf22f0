"""Which user a namespace belongs to, read from the namespace templates.

>>> owner_of(("memories", "alice", "semantic"), [("memories", "{user_id}", "semantic")])
'alice'
>>> owner_of(("memories", "ana%2Eg@x%2Eio", "semantic"), [("memories", "{user_id}", "semantic")])
'ana.g@x.io'
>>> owner_of(("langmem_vault", "watermarks", "extract"), [("memories", "{user_id}", "semantic")])
"""

from __future__ import annotations

from collections.abc import Sequence

from langmem_vault.memory._namespaces import NamespaceTemplate, decode_label

__all__ = ["owner_of"]


def owner_of(namespace: tuple[str, ...], templates: Sequence[NamespaceTemplate]) -> str | None:
    """The user id a namespace belongs to, by the first template it fits exactly.

    A template fits when it has the same length, its fixed labels are equal, and its
    ``{user_id}`` label is filled; templates with other placeholders never fit.
    """
    for template in templates:
        if len(namespace) != len(template):
            continue
        user = None
        for label, pattern in zip(namespace, template, strict=True):
            if pattern == "{user_id}":
                user = decode_label(label)  # labels hold the id encoded (no '.')
            elif "{" in pattern or label != pattern:
                break
        else:
            if user:
                return user
    return None
