"""Errors as JSON, ``{"error": kind, "field": ..., "message": ...}``, with a 4xx status (the
shape of ``service.errors.ServiceError.to_dict``).

Bad input never reaches a write: request bodies and query parameters are validated by
FastAPI (422), memory values by the pydantic models (422), and service checks raise
``ValueError`` (400). Every error names the field when one is at fault.

>>> field_of(("body", "priority"))
'priority'
>>> field_of_message("limit must be at least 1, got 0")
'limit'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from langmem_vault.service._errors import ServiceError

__all__ = [
    "FieldError",
    "NotAuthenticated",
    "field_of",
    "field_of_message",
    "forbidden",
    "http_error",
    "install",
    "unauthenticated",
]

#: a message that starts by naming a field: "limit must ...", "user_id: ...", "priority is ..."
_LEADING_FIELD = re.compile(r"^([a-z_][a-z0-9_.]*)(?::| must| is | should)")


class FieldError(ValueError):
    """Bad input in one named field (400)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class NotAuthenticated(Exception):
    """No or an unknown API key (401)."""


def field_of(loc: Sequence[Any]) -> str:
    """A pydantic error location as a field path, without FastAPI's ``body``/``query`` root."""
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    return ".".join(parts) or "body"


def field_of_message(message: str) -> str | None:
    """The field a plain error message starts by naming, if any."""
    match = _LEADING_FIELD.match(message)
    return match.group(1) if match else None


def _body(kind: str, message: str, field: str | None, detail: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"error": kind, "field": field, "message": message}
    if detail is not None:
        out["detail"] = detail
    return out


def _detail(error: Mapping[str, Any]) -> dict[str, Any]:
    loc, kind = tuple(error.get("loc", ())), error.get("type")
    if kind == "json_invalid":  # its location is a character offset, not a field
        at = loc[-1] if len(loc) > 1 else "?"
        reason = (error.get("ctx") or {}).get("error", "invalid JSON")
        return {"field": "body", "message": f"not valid JSON (at character {at}): {reason}",
                "type": kind}  # fmt: skip
    return {"field": field_of(loc), "message": error.get("msg", ""), "type": kind}


def _validation(errors: Sequence[Any]) -> JSONResponse:
    detail = [_detail(e) for e in errors]
    first = detail[0] if detail else {"field": "body", "message": "invalid input"}
    message = str(first["message"]).removeprefix("Value error, ")
    return JSONResponse(_body("InvalidInput", message, first["field"], detail), status_code=422)


def unauthenticated(exc: NotAuthenticated) -> JSONResponse:
    message = str(exc) or "a valid API key is required"
    body = _body("NotAuthenticated", message, "authorization")
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})


def forbidden(exc: PermissionError) -> JSONResponse:
    return JSONResponse(_body("Forbidden", str(exc), None), status_code=403)


def http_error(exc: HTTPException) -> JSONResponse:
    kind = {404: "NotFound", 413: "TooLarge"}.get(exc.status_code, "HTTPError")
    field = "body" if exc.status_code == 413 else None  # the only 413: a body over its cap
    return JSONResponse(_body(kind, str(exc.detail), field), status_code=exc.status_code)


def install(app: FastAPI) -> None:
    """Register the JSON error handlers on ``app``."""

    @app.exception_handler(ServiceError)
    async def _service(request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(exc.to_dict(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _validation(exc.errors())

    @app.exception_handler(ValidationError)
    async def _model_invalid(request: Request, exc: ValidationError) -> JSONResponse:
        return _validation(exc.errors())

    @app.exception_handler(FieldError)
    async def _field(request: Request, exc: FieldError) -> JSONResponse:
        return JSONResponse(_body("InvalidInput", str(exc), exc.field), status_code=400)

    @app.exception_handler(ValueError)
    async def _value(request: Request, exc: ValueError) -> JSONResponse:
        message = str(exc)
        field = field_of_message(message)
        return JSONResponse(_body("InvalidInput", message, field), status_code=400)

    @app.exception_handler(PermissionError)
    async def _forbidden(request: Request, exc: PermissionError) -> JSONResponse:
        return forbidden(exc)

    @app.exception_handler(NotAuthenticated)
    async def _unauthenticated(request: Request, exc: NotAuthenticated) -> JSONResponse:
        return unauthenticated(exc)

    @app.exception_handler(LookupError)
    async def _missing(request: Request, exc: LookupError) -> JSONResponse:
        message = exc.args[0] if exc.args else "not found"
        return JSONResponse(_body("NotFound", str(message), None), status_code=404)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        return http_error(exc)
