"""The tenant: which user a row belongs to, the column that leads every table's keys.

A tenant is text: the user id the row belongs to, or :data:`SHARED_TENANT` (the empty string,
which no user id can be: :func:`langmem_vault.check_user_id`) for data of no user (shared
namespaces, global instructions, the extraction watermarks). The store's tables (items,
vectors, entities) carry it first in their primary keys and unique indexes, so they can be
hash-partitioned by it (``setup(partitions=N)``) or distributed by it on Citus, and a
statement that names one tenant reads one partition (one shard). The saver's tables carry
the tenant of each thread's owner (checkpointers/_tenancy.py); the job queue's and the audit
log's tables have none (docs/citus.md says why and what that means).

The store reads a namespace's tenant from its user label, by the first template that fits the
namespace's leading labels (:class:`TenantRule`).

Store labels may not contain ``.``, so a user id is encoded reversibly in a label: ``%``
becomes ``%25`` and ``.`` becomes ``%2E`` (an email address works as a user id).

>>> rule = TenantRule()
>>> rule.tenant_of(("memories", "ana%2Eg@x%2Eio", "semantic"))
'ana.g@x.io'
>>> rule.tenant_of(("langmem_vault", "watermarks", "extract")) == SHARED_TENANT
True
>>> rule.scope_tenant(("memories", "u1")), rule.scope_tenant(("memories",))
('u1', None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from psycopg import sql

__all__ = [
    "DEFAULT_RULE",
    "DEFAULT_TENANT_TEMPLATES",
    "SHARED_TENANT",
    "USER_LABEL",
    "TenantRule",
    "decode_label",
    "encode_label",
]

#: the tenant of data that belongs to no user
SHARED_TENANT = ""
USER_LABEL = "{user_id}"
_OF_MEMORIES: tuple[tuple[str, ...], ...] = (
    ("memories", USER_LABEL),
    ("langmem_vault", "usage", "memories", USER_LABEL),
    ("langmem_vault", "tails", "memories", USER_LABEL),
)
#: The leading labels of the namespaces that belong to a user: the memory namespaces
#: (``("memories", "{user_id}", ...)``), their usage records and inline extraction's tails of
#: them, what a soft erase quarantined of those (under ``"erased"``), the user's consent and
#: model-call accounting.
DEFAULT_TENANT_TEMPLATES: tuple[tuple[str, ...], ...] = (
    *_OF_MEMORIES,
    *(("erased", *template) for template in _OF_MEMORIES),
    ("privacy", USER_LABEL),
    ("langmem_vault", "accounting", USER_LABEL),
)

_ESCAPES = {"%": "%25", ".": "%2E"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_ESCAPED = re.compile("|".join(map(re.escape, _UNESCAPES)))


def encode_label(value: str) -> str:
    """``value`` as a store namespace label: ``%`` and ``.`` escaped, nothing else changed."""
    return value.replace("%", "%25").replace(".", "%2E")


def decode_label(label: str) -> str:
    """The value :func:`encode_label` turned into ``label``."""
    return _ESCAPED.sub(lambda m: _UNESCAPES[m.group()], label)


def _fits(labels: Sequence[str], template: Sequence[str]) -> str | None:
    """The user label of ``labels`` when they fit ``template`` label for label, else None."""
    user = None
    for label, pattern in zip(labels, template, strict=False):
        if pattern == USER_LABEL:
            if not label:
                return None
            user = label
        elif label != pattern:
            return None
    return user if user is not None else ""


@dataclass(frozen=True)
class TenantRule:
    """Which namespaces belong to a user: each template is the leading labels of such
    namespaces, fixed labels and one ``{user_id}`` label; the first template a namespace's
    leading labels fit names its tenant, and a namespace no template fits is shared."""

    templates: tuple[tuple[str, ...], ...] = DEFAULT_TENANT_TEMPLATES

    def __post_init__(self) -> None:
        for template in self.templates:
            users = [label for label in template if label == USER_LABEL]
            if len(users) != 1 or any("{" in label for label in template if label != USER_LABEL):
                raise ValueError(
                    f"tenant template {template!r}: give fixed labels and exactly one "
                    f"{USER_LABEL!r} label"
                )

    def tenant_of(self, namespace: Sequence[str]) -> str:
        """The tenant of the items in ``namespace``."""
        for template in self.templates:
            if len(namespace) >= len(template):
                user = _fits(namespace, template)
                if user:
                    return decode_label(user)
        return SHARED_TENANT

    def scope_tenant(self, prefix: Sequence[str]) -> str | None:
        """The tenant of every namespace under ``prefix`` (``prefix`` itself and the namespaces
        that extend it), or None when they may belong to several tenants (a search across
        users)."""
        for template in self.templates:
            if len(prefix) >= len(template):
                user = _fits(prefix, template)
                if user:
                    return decode_label(user)
            elif _fits(prefix, template) is not None:
                return None  # some namespaces under the prefix fit this template
        return SHARED_TENANT

    def tenant_sql(self, namespace: str) -> sql.Composable:
        """The rule as a SQL expression over the ``text[]`` column ``namespace`` (the
        migration that fills the tenant column of rows written before it had one)."""
        col = sql.SQL(namespace)
        cases = []
        for template in self.templates:
            conds = [sql.SQL("cardinality({}) >= {}").format(col, len(template))]
            user: sql.Composable = sql.SQL("")
            for n, label in enumerate(template, start=1):
                at = sql.SQL("{}[{}]").format(col, n)
                if label == USER_LABEL:
                    conds.append(sql.SQL("{} <> ''").format(at))
                    # decode_label: no escape can produce another, so replacing in turn works
                    user = sql.SQL("replace(replace({}, '%2E', '.'), '%25', '%')").format(at)
                else:
                    conds.append(sql.SQL("{} = {}").format(at, sql.Literal(label)))
            cases.append(sql.SQL("WHEN {} THEN {}").format(sql.SQL(" AND ").join(conds), user))
        return sql.SQL("CASE {} ELSE {} END").format(
            sql.SQL(" ").join(cases), sql.Literal(SHARED_TENANT)
        )


#: the rule of a store given no other (``DEFAULT_TENANT_TEMPLATES``)
DEFAULT_RULE = TenantRule()
