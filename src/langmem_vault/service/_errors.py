"""The service's one exception family: what the CLI turns into exit code 2 and the API into a
4xx JSON error. Every service method validates before it writes, so when one of these is
raised nothing was written.

>>> err = InvalidInput("priority", "must be in 1..10, got 11")
>>> str(err), err.status
('priority: must be in 1..10, got 11', 422)
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

__all__ = ["Forbidden", "InvalidInput", "NotFound", "ServiceError", "from_validation"]


class ServiceError(Exception):
    """Base of the service's errors. ``field`` names the input at fault (or None);
    ``status`` is the HTTP status an API maps it to."""

    status = 400

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{"error": kind, "field": ..., "message": ...}``."""
        return {"error": type(self).__name__, "field": self.field, "message": self.message}


class NotFound(ServiceError):
    """No such user, memory, instruction, episode or thread."""

    status = 404


class InvalidInput(ServiceError):
    """A value out of range, of the wrong type, or not allowed in the item's current state."""

    status = 422


class Forbidden(ServiceError):
    """The acting identity may not act for this user (or needs admin rights)."""

    status = 403


def from_validation(exc: ValidationError, prefix: str | None = None) -> InvalidInput:
    """The first error of a pydantic validation as :class:`InvalidInput` naming the field.

    >>> from langmem_vault.memory._models import Instruction
    >>> try:
    ...     Instruction(text="x", priority=11)
    ... except ValidationError as e:
    ...     print(from_validation(e))
    priority: Input should be less than or equal to 10
    """
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    if prefix:
        field = f"{prefix}.{field}" if field else prefix
    message = str(first["msg"]).removeprefix("Value error, ")
    return InvalidInput(field, message)
