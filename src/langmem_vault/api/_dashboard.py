"""The dashboard: server-rendered Jinja2 pages with htmx fragments, on the same service as the
REST API (no build step; htmx and Chart.js are vendored under ``static/``).

Pages: memories (search, category and kind filters, status tabs, inline edit, delete,
confirm/reject), standing instructions (priority buttons, active toggle), analytics (charts),
threads with the injection trace, export and erase (erase asks for the user id again).
Templates are read once when the app is built, so rendering never touches the disk on the
event loop (the LangGraph dev server refuses blocking calls there).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import DictLoader, Environment, select_autoescape

from langmem_vault.api._auth import acting_for
from langmem_vault.api._deps import identity, service
from langmem_vault.api._errors import FieldError, NotAuthenticated
from langmem_vault.api._sessions import COOKIE, Sessions
from langmem_vault.memory._models import CATEGORIES
from langmem_vault.service import Identity, MemoryService, ServiceError
from langmem_vault.service._categories import CategoryInfo, colour_of
from langmem_vault.service._records import MAX_OFFSET, MemoryRecord, Status

__all__ = ["TABS", "build_router", "load_templates"]

#: the status tabs of the memory list and the service statuses each one shows
TABS: dict[str, list[Status]] = {
    "active": ["active"],
    "pending": ["pending"],
    "superseded": ["superseded", "forgotten"],
    "expired": ["expired"],
}
PAGE = 50


def load_templates() -> Environment:
    """Every template of the package, read now into memory."""
    root = resources.files("langmem_vault.api").joinpath("templates")
    found: dict[str, str] = {}

    def walk(folder: Any, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".html"):
                found[prefix + entry.name] = entry.read_text(encoding="utf-8")

    walk(root, "")
    return Environment(loader=DictLoader(found), autoescape=select_autoescape(default=True))


class View:
    """What every page needs: who acts, for whom, links that keep the user, rendering."""

    def __init__(self, request: Request, who: Identity, user_id: str | None) -> None:
        self.request = request
        self.who = who
        self.user_id = user_id
        self.prefix: str = request.app.state.vault_prefix
        self.colours: dict[str, str] = {}

    @property
    def service(self) -> MemoryService:
        return service(self.request).acting_as(self.who)

    def link(self, path: str, *segments: Any, **params: Any) -> str:
        """The URL of ``path`` (a route of ours, written in a template) followed by
        ``segments`` (data: a memory key, a thread id), each percent-encoded whole so it
        stays one path segment whatever it holds, and the query ``params``."""
        query = {k: v for k, v in params.items() if v is not None and v != ""}
        if self.who.is_admin and self.user_id:
            query = {"user_id": self.user_id, **query}
        url = f"{self.prefix}/{path}" + "".join(f"/{quote(str(s), safe='')}" for s in segments)
        return f"{url}?{urlencode(query, doseq=True)}" if query else url

    def api(self, path: str) -> str:
        return self.link(f"api/{path}")

    def colour(self, name: str | None) -> str:
        return self.colours.get(name or "general") or colour_of(name)

    async def load_colours(self, user_id: str) -> list[CategoryInfo]:
        """The user's categories, their colours kept for :meth:`colour`. Not counted:
        counting their facts reads every current fact of the user (0.4 s at 10,000); the
        pages need names and colours only."""
        categories = await self.service.alist_categories(user_id, counted=False)
        self.colours = {c.name: c.colour for c in categories}
        return categories

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        env: Environment = self.request.app.state.vault_templates
        html = env.get_template(template).render(
            user_id=self.user_id,
            admin=self.who.is_admin,
            local=self.who.name == "local",
            signed_in=self.request.cookies.get(COOKIE) is not None,
            link=self.link,
            api=self.api,
            colour=self.colour,
            static=lambda name: f"{self.prefix}/static/{name}",
            **context,
        )
        return HTMLResponse(html, status_code=status_code)


async def _view(request: Request, user_id: str | None) -> View:
    who = await identity(request)
    uid = acting_for(who, user_id) if (user_id or not who.is_admin) else None
    return View(request, who, uid)


async def _acting_view(request: Request, user_id: str | None) -> tuple[View, str]:
    """The view of an action on one user's data, and that user (an admin must name one)."""
    view = await _view(request, user_id)
    if view.user_id is None:
        raise FieldError("user_id", "an admin request must name the user it acts for")
    return view, view.user_id


def _login(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{request.app.state.vault_prefix}/login", status_code=303)


UserQuery = Annotated[str | None, Query(max_length=256)]


def build_router() -> APIRouter:
    """The dashboard's routes (mounted under the app's prefix)."""
    router = APIRouter(include_in_schema=False)

    @router.get("/login")
    async def login_page(request: Request) -> Response:
        return View(request, Identity.for_user("-"), None).render("login.html", error=None)

    @router.post("/login")
    async def login(request: Request, key: Annotated[str, Form(max_length=512)]) -> Response:
        prefix = request.app.state.vault_prefix
        check = getattr(request.app.state.vault_auth, "identity_for", None)
        who = check(key) if check is not None else None
        if who is None:
            view = View(request, Identity.for_user("-"), None)
            message = "Unknown API key." if check is not None else "This server takes no keys."
            return view.render("login.html", status_code=401, error=message)
        sessions: Sessions = request.app.state.vault_sessions
        response = RedirectResponse(f"{prefix}/", status_code=303)
        response.set_cookie(COOKIE, sessions.start(who), **sessions.cookie_options(request))
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        sessions: Sessions = request.app.state.vault_sessions
        sessions.end(request.cookies.get(COOKIE))
        response = _login(request)
        options = sessions.cookie_options(request)
        response.delete_cookie(
            COOKIE, path=options["path"], secure=options["secure"], httponly=True, samesite="strict"
        )
        return response

    @router.get("/")
    async def memories_page(
        request: Request,
        user_id: UserQuery = None,
        status: str = "active",
        q: Annotated[str | None, Query(max_length=2000)] = None,
        search_type: str = "hybrid",
        category: str | None = None,
        kind: str = "semantic",
        offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
        after: Annotated[str | None, Query(max_length=1000)] = None,
    ) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        if view.user_id is None:
            return view.render("memories.html", page="memories")
        svc, uid = view.service, view.user_id
        status = status if status in TABS else "active"
        filters: dict[str, Any] = {"kind": kind or None, "category": category or None}
        categories = await view.load_colours(uid)
        # every tab's count in one statement, capped as a listing's total is
        by_status = await svc.acount_memories(uid, **filters)
        counts, capped = {}, set()
        for tab, statuses in TABS.items():
            counts[tab], more = by_status.total(statuses)
            if more:
                capped.add(tab)
        items: list[MemoryRecord]
        if q:
            with request.app.state.vault_latency.timed("search", user_id=uid):
                found = await svc.asearch_memories(
                    uid,
                    q,
                    search_type=search_type,  # type: ignore[arg-type]
                    status=TABS[status],
                    limit=PAGE,
                    **filters,
                )
            items, total, truncated = list(found.items), len(found.items), found.truncated
            following = None
        else:
            listed = await svc.alist_memories(
                uid, status=TABS[status], limit=PAGE, offset=offset, after=after, **filters
            )
            # the tab's count is the listing's total (same filters), counted above
            items, total, truncated = listed.items, counts[status], listed.truncated
            # the next page by cursor: a walk from this page's end, not over the rows before
            following = listed.next
        return view.render(
            "memories.html",
            page="memories",
            tabs=list(TABS),
            status=status,
            counts=counts,
            capped=capped,
            q=q,
            search_type=search_type,
            category=category,
            kind=kind,
            categories=categories,
            items=items,
            total=total,
            following=following,
            truncated=truncated,
            max_rows=svc.max_rows,
            offset=offset,
            limit=PAGE,
        )

    async def _row(
        request: Request, user_id: str | None, key: str, action: str | None = None
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        svc = view.service
        calls = {
            "confirm": svc.aconfirm_memory,
            "reject": svc.areject_memory,
            "delete": svc.aforget_memory,
            "restore": svc.arestore_memory,
        }
        record = await (calls[action] if action else svc.aget_memory)(uid, key)
        await view.load_colours(uid)
        return view.render("partials/memory_row.html", m=record)

    @router.get("/ui/memories/{key}/row")
    async def memory_row(request: Request, key: str, user_id: UserQuery = None) -> Response:
        return await _row(request, user_id, key)

    @router.post("/ui/memories/{key}/{action}")
    async def memory_action(
        request: Request, key: str, action: str, user_id: UserQuery = None
    ) -> Response:
        if action not in ("confirm", "reject", "delete", "restore"):
            raise LookupError(f"no action {action!r}")
        return await _row(request, user_id, key, action)

    @router.get("/ui/memories/{key}/edit")
    async def memory_edit(request: Request, key: str, user_id: UserQuery = None) -> Response:
        view, uid = await _acting_view(request, user_id)
        record = await view.service.aget_memory(uid, key)
        return view.render(
            "partials/memory_edit.html", m=record, builtin_categories=CATEGORIES, error=None
        )

    @router.post("/ui/memories/{key}")
    async def memory_save(
        request: Request,
        key: str,
        text: Annotated[str, Form()],
        category: Annotated[str, Form()],
        confidence: Annotated[str, Form()] = "",
        tags: Annotated[str, Form()] = "",
        user_id: UserQuery = None,
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        svc = view.service
        changes: dict[str, Any] = {
            "text": text,
            "category": category,
            "tags": [t.strip() for t in tags.split(",") if t.strip()],
        }
        try:
            if confidence.strip():
                changes["confidence"] = float(confidence)
            record = await svc.aedit_memory(uid, key, **changes)
        except (ServiceError, ValueError) as exc:
            current = await svc.aget_memory(uid, key)
            edited = current.model_copy(update={"text": text})
            return view.render(
                "partials/memory_edit.html",
                status_code=200,
                m=edited,
                builtin_categories=CATEGORIES,
                error=str(exc),
            )
        await view.load_colours(uid)
        return view.render("partials/memory_row.html", m=record)

    @router.get("/instructions")
    async def instructions_page(request: Request, user_id: UserQuery = None) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        items = []
        if view.user_id is not None:
            items = await view.service.alist_instructions(view.user_id)
        return view.render("instructions.html", page="instructions", items=items)

    @router.post("/ui/instructions")
    async def instruction_add(
        request: Request,
        text: Annotated[str, Form()],
        priority: Annotated[int, Form()] = 5,
        condition: Annotated[str, Form()] = "",
        user_id: UserQuery = None,
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        record = await view.service.aadd_instruction(
            uid, text, priority=priority, condition=condition or None
        )
        return view.render("partials/instruction_row.html", i=record)

    @router.post("/ui/instructions/{key}/priority")
    async def instruction_priority(
        request: Request,
        key: str,
        delta: Annotated[int, Query(ge=-9, le=9)],
        user_id: UserQuery = None,
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        svc = view.service
        current = await svc.aget_memory(uid, key)
        priority = min(10, max(1, (current.priority or 5) + delta))
        record = await svc.aedit_instruction(uid, key, priority=priority)
        return view.render("partials/instruction_row.html", i=record)

    @router.post("/ui/instructions/{key}/active")
    async def instruction_active(
        request: Request, key: str, active: bool, user_id: UserQuery = None
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        record = await view.service.aedit_instruction(uid, key, active=active)
        return view.render("partials/instruction_row.html", i=record)

    @router.post("/ui/instructions/{key}/delete")
    async def instruction_delete(request: Request, key: str, user_id: UserQuery = None) -> Response:
        view, uid = await _acting_view(request, user_id)
        await view.service.adelete_instruction(uid, key)
        return HTMLResponse("")

    @router.get("/analytics")
    async def analytics_page(request: Request, user_id: UserQuery = None) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        if view.user_id is None:
            return view.render("analytics.html", page="analytics")
        svc = view.service
        report = await svc.aanalytics(view.user_id, latency=request.app.state.vault_latency)
        by_status = await svc.acount_memories(view.user_id, kind="semantic")
        totals: dict[str, int | str] = {}
        for tab, statuses in TABS.items():
            n, more = by_status.total(statuses)
            totals[tab] = f"{n}+" if more else n
        await view.load_colours(view.user_id)
        return view.render(
            "analytics.html",
            page="analytics",
            a=report,
            totals=totals,
            charts=_charts(report.stats.growth, report.stats.by_category, view.colour),
        )

    @router.get("/threads")
    async def threads_page(request: Request, user_id: UserQuery = None) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        threads: list[Any] = []
        available = view.service.saver is not None
        if view.user_id is not None and available:
            threads = await view.service.alist_threads(view.user_id)
        return view.render(
            "threads.html", page="threads", threads=threads, threads_available=available
        )

    @router.get("/threads/{thread_id}")
    async def thread_page(request: Request, thread_id: str, user_id: UserQuery = None) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        trace = None
        if view.user_id is not None:
            trace = await view.service.ainjection_trace(view.user_id, thread_id)
            await view.load_colours(view.user_id)
        return view.render("thread.html", page="threads", thread_id=thread_id, trace=trace)

    @router.get("/privacy")
    async def privacy_page(request: Request, user_id: UserQuery = None) -> Response:
        try:
            view = await _view(request, user_id)
        except NotAuthenticated:
            return _login(request)
        return view.render("privacy.html", page="privacy", erased=None, error=None)

    @router.post("/ui/erase")
    async def erase(
        request: Request, confirm: Annotated[str, Form()], user_id: UserQuery = None
    ) -> Response:
        view, uid = await _acting_view(request, user_id)
        if confirm != uid:
            return view.render(
                "privacy.html",
                status_code=400,
                page="privacy",
                erased=None,
                error="The user id you typed does not match; nothing was erased.",
            )
        result = await view.service.aerase_user(uid)
        summary = (
            f"{result.store_items} stored items, {result.threads} threads, "
            f"{result.audit_events} audit events"
        )
        return view.render("privacy.html", page="privacy", erased=summary, error=None)

    return router


def _charts(growth: Any, by_category: Mapping[str, int], colour: Any) -> dict[str, Any]:
    return {
        "growth": {
            "labels": [d.day.isoformat() for d in growth],
            "daily": [d.added for d in growth],
            "cumulative": [d.total for d in growth],
        },
        "categories": {
            "labels": list(by_category),
            "values": list(by_category.values()),
            "colours": [colour(name) for name in by_category],
        },
    }
