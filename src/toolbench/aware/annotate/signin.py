"""The sign-in pages of an annotation server.

A person types a name; the name lives in the guard's signed cookie and names that person's
leases in the store. Signing out, or the server stopping, gives back the leases of every name
this server saw, so instances held by a closed tab return to the queue at once rather than
when their lease runs out.
"""

from __future__ import annotations

from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbench.aware.annotate.webkit import Guard, one, page, redirect, same_secret, valid_name


class LeaseStore(Protocol):
    """What sign-in needs of a store: leases given back by name, and closing."""

    def release(self, who: str) -> Any: ...

    def close(self) -> None: ...


class SignIn:
    """Home, login and logout for a server whose people are known by name.

    A subclass sets ``title`` (the page title), ``what`` (the verb the form names) and
    ``landing`` (where a signed-in person goes), and calls ``start_sign_in``.
    """

    title = ""
    what = ""
    landing = "/"

    def start_sign_in(self, guard: Guard, leases: LeaseStore, results_token: str) -> None:
        self.guard = guard
        self._leases = leases
        self.results_token = results_token  # "" = no results page
        self.people: set[str] = set()  # every name signed in on this server
        self._closed = False

    def sign_in_routes(self) -> list[Route]:
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
        ]

    def close(self) -> None:
        """Give back every lease a browser user of this server holds, then close the store."""
        if self._closed:
            return
        self._closed = True
        for person in sorted(self.people):
            self._leases.release(person)
        self._leases.close()

    def home(self, request: Request) -> Response:
        session = self.guard.session(request)
        if session is not None and session.name:
            return redirect(self.landing)
        session = session or self.guard.new_session()
        return self.guard.keep(self._login_page(session.csrf), session)

    async def login(self, request: Request) -> Response:
        session, form = await self.guard.post(request)
        try:
            name = valid_name(one(form, "name"))
        except ValueError as error:
            typed = one(form, "name")[:200]
            return self._login_page(session.csrf, str(error), typed, status=400)
        self.people.add(name)
        return self.guard.keep(redirect(self.landing), self.guard.new_session(name))

    async def logout(self, request: Request) -> Response:
        session, _ = await self.guard.post(request)
        if session.name:
            await run_in_threadpool(self._leases.release, session.name)
        return self.guard.forget(redirect("/"))

    def require_results_token(self, request: Request) -> None:
        """The results are for the person who started the server: 403 without its token."""
        token = request.query_params.get("token", "")
        if not self.results_token or not same_secret(token, self.results_token):
            raise HTTPException(403, "the results need the token printed when the server started")

    def _login_page(
        self, csrf: str, error: str = "", name: str = "", status: int = 200
    ) -> Response:
        return page(
            "login.html",
            status=status,
            title=self.title,
            csrf=csrf,
            what=self.what,
            error=error,
            name=name,
        )
