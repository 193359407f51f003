"""The one same-origin rule for every request that changes state on our local web servers.

The review UI, the awareness human baseline and web_shop's store all listen on 127.0.0.1,
where any web page open in the same browser can send a form POST to them. A browser says
where such a request came from: ``Sec-Fetch-Site`` (``same-origin`` for our own pages,
``none`` for a typed URL or bookmark, ``same-site``/``cross-site`` otherwise) and ``Origin``
(the sending page's scheme, host and port). A request either header marks as foreign is
refused with 403 before it is read (``Origin: null``, which a page sends under
``Referrer-Policy: no-referrer``, included: our pages use ``same-origin``). A request with
neither header is let through: non-browser
clients (curl, agent frameworks, our own tests) send none, and a browser cannot leave both
out of a cross-site POST, so this costs those clients nothing.

The check lives here, outside both ``aware`` and ``tasks``, because tasks must not import the
awareness package and both need the same rule.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request

ALLOWED_FETCH_SITES = ("same-origin", "none")


def foreign_request(request: Request) -> str | None:
    """Why a browser's request came from another site or origin, or None when it did not."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ALLOWED_FETCH_SITES:
        return "a form from another site was refused"
    origin = request.headers.get("origin")
    if origin is None:
        return None
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:  # "http://[::1" and the like: no origin of ours
        netloc = None
    if netloc != request.headers.get("host"):
        return "a form from another origin was refused"
    return None


def check_same_origin(request: Request) -> None:
    """Refuse (403) a request that ``foreign_request`` finds came from elsewhere."""
    reason = foreign_request(request)
    if reason is not None:
        raise HTTPException(403, reason)
