"""The annotation server's kit: sessions, CSRF, pages, serving.

Every annotation server (the review, the human baseline) puts a form in front of people who are
not the person running the study, on a machine where other local pages (any web site open in
the same browser) can send requests to 127.0.0.1. So every page goes through the same guard:

* **Who you are** is a name typed into a form, kept in a cookie signed with a secret made when
  the server starts (HMAC-SHA256): a cookie cannot be forged, and another server's cookie (the
  review and the human baseline may run side by side on one host, and cookies ignore ports)
  simply reads as "no session".
* **CSRF**: each session carries a random token that every form posts back, compared in
  constant time; besides, a request whose ``Origin`` is not this server, or that the browser
  marks as cross-site (``Sec-Fetch-Site``), is refused before the token is looked at. The
  cookie is ``SameSite=Strict`` and ``HttpOnly``.
* **DNS rebinding**: requests must name one of the server's own host names in ``Host``.
* **Hostile text**: dataset text goes through Jinja2 with autoescaping on for every template,
  and the pages forbid inline script (``Content-Security-Policy``), so even a template mistake
  could not run a dataset's ``<script>``. The only script is the shipped key-shortcut file.
* **Bounded input**: forms are read up to ``MAX_FORM_BYTES`` and ``MAX_FIELDS`` with the
  standard library's parser (no multipart), and every field is checked by the endpoint.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import functools
import hashlib
import hmac
import json
import secrets
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from toolbench.errors import UserError
from toolbench.webcheck import check_same_origin

MAX_FORM_BYTES = 64 * 1024
MAX_FIELDS = 64
NAME_MAX = 64
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make Origin "null"
    "Cache-Control": "no-store",
}

#: Where the pages and their script and style are (the package data that ships them).
PAGES_PACKAGE = "toolbench.aware.review"

_ENV = Environment(
    loader=PackageLoader(PAGES_PACKAGE, "templates"),
    autoescape=True,  # every template, whatever its name: dataset text is hostile
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

Form = dict[str, list[str]]


def same_secret(given: str, expected: str) -> bool:
    """A constant-time comparison of text from a request with a secret of ours. Request text
    may hold any code point (even a lone surrogate): compared as bytes, it is simply unequal,
    where ``compare_digest`` on non-ASCII ``str`` raises."""
    encode = functools.partial(str.encode, encoding="utf-8", errors="surrogatepass")
    return hmac.compare_digest(encode(given), encode(expected))


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A rendered template with the security headers."""
    html = _ENV.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def redirect(url: str) -> RedirectResponse:
    """POST-redirect-GET: a reload shows the page again instead of resending the form."""
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


def valid_name(text: str) -> str:
    """A person's name as typed: stripped, 1 to NAME_MAX printable characters."""
    name = " ".join(text.split())
    if not name:
        raise ValueError("type your name")
    if len(name) > NAME_MAX or not name.isprintable():
        raise ValueError(f"a name is 1 to {NAME_MAX} printable characters")
    return name


@dataclass(frozen=True)
class Session:
    """One browser's identity: the person's name ("" until given) and its CSRF token."""

    name: str
    csrf: str


class Guard:
    """Signed session cookies, CSRF tokens and host/origin checks for one server."""

    def __init__(self, cookie: str, hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.cookie = cookie
        self.hosts = frozenset(h.lower() for h in hosts)
        self._secret = secrets.token_bytes(32)

    # ---- sessions ----

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()

    def session(self, request: Request) -> Session | None:
        """The request's session, or None when it has none (or a forged or foreign one)."""
        raw = request.cookies.get(self.cookie, "")
        body, _, signature = raw.rpartition(".")
        if not body or len(raw) > 1024:
            return None
        try:
            payload = base64.urlsafe_b64decode(body.encode("ascii") + b"=" * (-len(body) % 4))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            return None
        if not same_secret(self._sign(payload), signature):
            return None
        data = json.loads(payload)  # signed by us: well formed
        return Session(name=str(data["name"]), csrf=str(data["csrf"]))

    @staticmethod
    def new_session(name: str = "") -> Session:
        return Session(name=name, csrf=secrets.token_urlsafe(24))

    def keep(self, response: Response, session: Session) -> Response:
        payload = json.dumps({"name": session.name, "csrf": session.csrf}).encode("utf-8")
        # Unpadded base64url and hex: cookie-safe characters, so the value is never quoted.
        body = base64.urlsafe_b64encode(payload).decode("ascii").rstrip("=")
        value = body + "." + self._sign(payload)
        response.set_cookie(
            self.cookie, value, max_age=7 * 86400, httponly=True, samesite="strict", path="/"
        )
        return response

    def forget(self, response: Response) -> Response:
        response.delete_cookie(self.cookie, path="/", httponly=True, samesite="strict")
        return response

    # ---- requests ----

    def check_host(self, request: Request) -> None:
        """Refuse a Host this server does not answer to (a DNS-rebinding page)."""
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.lower() not in self.hosts:
            raise HTTPException(400, f"unexpected Host {host[:100]!r}: open the address printed")

    def check_origin(self, request: Request) -> None:
        """The rule all our local servers share (``toolbench.webcheck``)."""
        check_same_origin(request)

    async def post(self, request: Request) -> tuple[Session, Form]:
        """A POST's session and form after the origin and CSRF checks (403 otherwise)."""
        self.check_origin(request)
        form = await read_form(request)
        session = self.session(request)
        token = (form.get("csrf") or [""])[0]
        if session is None or not same_secret(token, session.csrf):
            raise HTTPException(403, "the form has expired or was not sent by this page; reload")
        return session, form


async def read_form(request: Request) -> Form:
    """An urlencoded form body, bounded in size and fields (413/415/400 otherwise)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(415, "send the page's form (application/x-www-form-urlencoded)")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise HTTPException(413, f"the form is larger than {MAX_FORM_BYTES} bytes")
    try:
        return parse_qs(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=MAX_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, "the form could not be read") from None


def one(form: Mapping[str, list[str]], field: str, default: str = "") -> str:
    """The first value of a form field."""
    values = form.get(field)
    return values[0] if values else default


def whole_number(text: str) -> int | None:
    """A form field as a non-negative int, or None: ASCII digits only (``"²".isdigit()`` is
    true, and ``int("²")`` raises), at most 18 of them."""
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


def error_page(request: Request, exc: Exception) -> Response:
    """HTTP errors as a short page (the message is escaped like everything else)."""
    assert isinstance(exc, HTTPException)
    return page("error.html", status=exc.status_code, message=exc.detail)


# ---- serving ----


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a UserError naming the flag to change."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise UserError(f"--host {host}: not an address to listen on ({error.strerror})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise UserError(
                f"--port {port}: {host}:{port} is already in use; pick another --port "
                "(or --port 0 for a free one)"
            ) from None
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({error.strerror})"
        ) from None
    return sock


def hosts_for(host: str) -> tuple[str, ...]:
    """Host names a server bound to ``host`` answers to: loopback names, and ``host`` itself
    (with this machine's names when it listens on every interface)."""
    names = [*LOOPBACK_HOSTS, host]
    if host in ("0.0.0.0", "::", ""):
        names += [socket.gethostname(), socket.getfqdn()]
    return tuple(names)


def exposure(host: str) -> str:
    """A warning line when the server is reachable from other machines; "" on loopback."""
    if host in LOOPBACK_HOSTS:
        return ""
    return (
        f"\n  note: --host {host} lets other machines reach this page; anyone who can reach it "
        "can review under any name"
    )


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run(app: Any, sock: socket.socket, on_server: Callable[[Any], None] | None = None) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (or ``server.should_exit``; ``on_server`` gets
    the uvicorn server, for tests that stop it from another thread)."""
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    if on_server is not None:
        on_server(server)
    # uvicorn shuts down gracefully on Ctrl-C, then raises it again; here Ctrl-C is the
    # ordinary way to stop, and the caller still has work to do (release leases, export).
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])


def make_app(routes: list[Any], guard: Guard) -> Any:
    """A Starlette app with the Host check, error pages and the shipped static files."""

    async def host_check(request: Request, call_next: RequestResponseEndpoint) -> Response:
        try:
            guard.check_host(request)
        except HTTPException as exc:
            return error_page(request, exc)
        return await call_next(request)

    static = StaticFiles(packages=[(PAGES_PACKAGE, "static")])
    return Starlette(
        routes=[*routes, Mount("/static", app=static, name="static")],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=host_check)],
        exception_handlers={HTTPException: error_page},
    )
