"""Turn a model's curl line into a validated HTTP request, without ever running a shell.

The original ToolBench handed the model's curl line to a shell. Model output is hostile, so
here the line is only *read*: a small POSIX-sh lexer splits it into words and refuses anything
a shell would treat as an operator or expansion (``;``, ``&&``, ``|``, ``>``, backticks,
``$(``...), and a whitelist of curl options builds an ``HttpRequest`` that the caller sends
with httpx to a simulated service (or, opt-in, the live API). ``shlex`` is not used because its
output cannot tell a quoted ``';'`` from an unquoted one and it does not know ``$(``/backticks.

Every refusal is a ``CurlError`` whose message is one line that names the problem, so a
scorer can report it; no other exception escapes ``parse_curl`` for any input string. What is
accepted is also *sendable*: header values are ASCII (httpx encodes them as ASCII and would
raise later, outside any per-sample handler) and the re-encoded URL stays under httpx's cap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

MAX_LINE = 8_000  # characters; a curl line is short, and the cap keeps parsing cheap
MAX_TOKENS = 64  # words in the line; enough for many -H/-d, too few to make work
MAX_URL = 32_000  # characters of the re-encoded URL (non-ASCII grows 9x); httpx refuses 64k
METHODS = frozenset({"GET", "POST", "DELETE", "PUT", "PATCH"})

# Option name -> kind. Only these are understood; everything else is refused by name.
_LONG = {
    "--request": "method", "--header": "header", "--url": "url", "--json": "json",
    "--data": "data", "--data-ascii": "data", "--data-binary": "data",
    "--data-raw": "data-raw", "--data-urlencode": "data-urlencode", "--get": "get",
    "--compressed": "flag", "--silent": "flag", "--show-error": "flag", "--location": "flag",
}  # fmt: skip
_SHORT = {"X": "method", "H": "header", "d": "data", "G": "get", "s": "flag", "S": "flag",
          "L": "flag"}  # fmt: skip
_TAKES_VALUE = {"method", "header", "url", "json", "data", "data-raw", "data-urlencode"}
# Why well-known options are refused (anything else gets a generic "not supported").
_WHY = {
    flag: why
    for why, flags in {
        "it writes a file": "-o --output -O --remote-name -c --cookie-jar",
        "it reads a local file": "-T --upload-file -F --form -K --config -b --cookie",
        "it connects elsewhere": "--unix-socket -x --proxy --resolve --connect-to",
        "it changes the output": "-w --write-out -i --include",
        "it sends credentials": "-u --user",
        "it disables TLS checks": "-k --insecure",
    }.items()
    for flag in flags.split()
}
_ALLOWED_FLAGS = "-X -H -d --data(-raw|-ascii|-binary|-urlencode) --json -G -s -S -L --compressed"
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")  # all but tab
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines() splits
_OPERATOR = re.compile(r"[;&|<>()]+")
_EXPANSION = re.compile(r"[A-Za-z0-9_({@*#?$!-]")  # what may follow '$' to expand
_TCHAR = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_REFUSED_HEADERS = frozenset({"host", "content-length", "transfer-encoding"})
_PATH_SAFE = "/:@,;=+"
_QUERY_SAFE = ",:/@"


class CurlError(ValueError):
    """A curl line we refuse; str(e) is one line saying why."""


@dataclass(frozen=True)
class HttpRequest:
    """One HTTP request, decoded so that equivalent curl spellings compare equal.

    ``headers`` are the ones the line set, plus ``--json``'s content-type/accept. Unlike curl,
    ``-d`` adds no form content-type: the original's JSON bodies were sent with ``-d``, so a
    service should read the body as given (see ``json_body``).
    """

    method: str
    scheme: str
    host: str
    path: str
    query: tuple[tuple[str, str], ...]
    headers: tuple[tuple[str, str], ...]
    body: bytes | None

    def url(self) -> str:
        """``scheme://host/path?query``, re-encoded (spaces as %20) for httpx."""
        url = f"{self.scheme}://{self.host}{quote(self.path, safe=_PATH_SAFE)}"
        if self.query:
            url += "?" + "&".join(
                f"{quote(k, safe=_QUERY_SAFE)}={quote(v, safe=_QUERY_SAFE)}" for k, v in self.query
            )
        return url

    def query_dict(self) -> dict[str, str]:
        """The query as a dict; the last value of a repeated name wins."""
        return dict(self.query)

    def json_body(self) -> Any | None:
        """The body parsed as JSON (None without a body); CurlError if it is not JSON."""
        if self.body is None:
            return None
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError) as exc:
            raise CurlError(f"request body is not JSON: {_show(self.body)}") from exc


def first_curl_line(text: str) -> str | None:
    r"""The first line of a reply that, stripped, starts with ``curl`` (as the original scorer
    did), so prose and ``` fences around the command are ignored. Backticks wrapping the line
    itself (```curl ...``` or `curl ...`) are removed. None if there is no such line.

    Lines without ``curl`` cannot qualify, so the scan starts at the line holding the first
    ``curl`` and skips the others unexamined: a degenerate reply of millions of short lines
    ("(\n" repeated) costs a few C-speed scans, not a Python loop per line."""
    at = text.find("curl")
    if at < 0:
        return None
    begin = max(text.rfind(mark, 0, at) for mark in _LINE_BREAKS) + 1
    for raw in text[begin:].splitlines():
        if "curl" not in raw:
            continue
        line = raw.strip().strip("`").strip()
        if re.match(r"curl(?:\s|$)", line):
            return line
    return None


def parse_curl(
    line: str, *, api_key: str | None = None, allowed_hosts: frozenset[str] | None = None
) -> HttpRequest:
    """Parse one curl line into an ``HttpRequest``, or raise ``CurlError`` saying why not.

    ``{API_KEY}`` is replaced by ``api_key`` in every word after lexing, so a key can never
    change how the line splits. ``allowed_hosts`` (``host`` or ``host:port``) limits where the
    request may go; without it any http(s) host on the default port is accepted.
    """
    if not isinstance(line, str):
        raise CurlError(f"a curl line must be text, not {type(line).__name__}")
    if len(line) > MAX_LINE:
        raise CurlError(f"curl line is too long ({len(line)} characters; at most {MAX_LINE})")
    if api_key is not None and (_CONTROL.search(api_key) or not _encodable(api_key)):
        raise CurlError("the API key contains control characters")
    words = _lex(line.strip())
    if not words or words[0] != "curl":
        raise CurlError(f"not a curl command (starts with {_show(words[0] if words else '')})")
    if api_key is not None:
        words = [w.replace("{API_KEY}", api_key) for w in words]
    return _build(words[1:], allowed_hosts)


def _lex(line: str) -> list[str]:
    """Split like POSIX sh, refusing operators, expansions, comments and extra lines."""
    _check_text(line)
    words: list[str] = []
    word: list[str] | None = None  # None between words; [] is an empty quoted word
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t":
            if word is not None:
                words.append("".join(word))
                word = None
            i += 1
            continue
        if c == "#" and word is None:
            raise CurlError("unquoted '#' starts a shell comment; quote it")
        word = [] if word is None else word
        if c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise CurlError("unterminated single quote")
            word.append(line[i + 1 : end])
            i = end + 1
        elif c == '"':
            i = _double_quoted(line, i + 1, word)
        elif c == "\\":
            if i + 1 >= n:
                raise CurlError("trailing backslash continues the command onto another line")
            word.append(line[i + 1])
            i += 2
        else:
            _refuse_operator(line, i)
            _refuse_expansion(line, i, quoted=False)
            word.append(c)
            i += 1
    if word is not None:
        words.append("".join(word))
    if len(words) > MAX_TOKENS:
        raise CurlError(f"too many arguments (at most {MAX_TOKENS})")
    return words


def _check_text(line: str) -> None:
    """Refuse what no shell word may hold: lone surrogates, control characters, more lines."""
    if not _encodable(line):
        raise CurlError("curl line is not valid Unicode text (lone surrogate)")
    bad = _CONTROL.search(line)
    if bad:
        if bad.group() in "\n\r\u2028\u2029":
            raise CurlError("more than one line: send exactly one curl command on one line")
        raise CurlError(f"control character {bad.group()!r} in the curl line")


def _double_quoted(line: str, i: int, word: list[str]) -> int:
    """Add the text of the double-quoted string starting at ``i`` (after its opening quote)
    to ``word``, as sh reads it; the index after the closing quote."""
    n = len(line)
    while i < n and line[i] != '"':
        c = line[i]
        if c == "\\" and i + 1 < n and line[i + 1] in '$`"\\':
            word.append(line[i + 1])
            i += 2
            continue
        _refuse_expansion(line, i, quoted=True)
        word.append(c)
        i += 1
    if i >= n:
        raise CurlError("unterminated double quote")
    return i + 1


def _refuse_operator(line: str, i: int) -> None:
    """Refuse a shell operator outside quotes: the line must stay one curl command."""
    op = _OPERATOR.match(line, i)
    if not op:
        return
    if op.group() == "&":
        raise CurlError(
            "unquoted '&' would end the command (a shell runs it in the background);"
            " quote it, e.g. put the URL in single quotes"
        )
    raise CurlError(
        f"shell operator {op.group()!r} outside quotes is not allowed"
        " (one curl command only: no chaining, pipes, redirects or subshells)"
    )


def _refuse_expansion(line: str, i: int, *, quoted: bool) -> None:
    """Refuse command substitution and parameter expansion: we cannot (and will not) run them."""
    if line[i] == "`":
        raise CurlError("backticks (command substitution) are not allowed")
    if line[i] == "$" and i + 1 < len(line):
        nxt = line[i + 1]
        if _EXPANSION.match(nxt) or (not quoted and nxt in "'\""):
            shown = re.match(r"\$(?:\w{1,20}|.)", line[i : i + 22], re.DOTALL)
            what = shown.group() if shown else "$"
            raise CurlError(f"shell expansion {what!r} is not allowed; quote it with '")


@dataclass
class _Parts:
    """What the options of one curl line asked for, before the URL is checked."""

    method: str | None = None
    urls: list[str] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    json_parts: list[str] = field(default_factory=list)
    get: bool = False


def _parts(args: list[str]) -> _Parts:
    """Sort the whitelisted options in ``args`` (the words after ``curl``) into their parts."""
    parts = _Parts()
    for flag, kind, value in _options(args):
        if kind == "get":
            parts.get = True
        elif kind == "method":
            parts.method = value.upper() if value.isascii() else value
            if parts.method not in METHODS:
                raise CurlError(f"method {_show(value)} is not one of {', '.join(sorted(METHODS))}")
        elif kind == "header":
            parts.headers.append(_header(value))
        elif kind == "url":
            parts.urls.append(value)
        elif kind != "flag":
            _data(flag, kind, value, parts.data, parts.json_parts)
    return parts


def _build(args: list[str], allowed_hosts: frozenset[str] | None) -> HttpRequest:
    """Apply the whitelisted options in ``args`` (the words after ``curl``)."""
    parts = _parts(args)
    if len(parts.urls) != 1:
        raise CurlError(f"expected exactly one URL, got {len(parts.urls)}")
    scheme, host, path, raw_query = _split_url(parts.urls[0], allowed_hosts)
    body, raw_query = _body(parts, raw_query)
    headers = list(parts.headers)
    if parts.json_parts:
        names = {name for name, _ in headers}
        for name in ("content-type", "accept"):
            if name not in names:
                headers.append((name, "application/json"))
    query = tuple(parse_qsl(raw_query, keep_blank_values=True))
    method = parts.method or ("POST" if body is not None else "GET")
    payload = None if body is None else body.encode("utf-8")
    request = HttpRequest(method, scheme, host, path, query, tuple(headers), payload)
    if len(request.url()) > MAX_URL:
        raise CurlError(f"URL is too long once percent-encoded (at most {MAX_URL} characters)")
    return request


def _body(parts: _Parts, raw_query: str) -> tuple[str | None, str]:
    """The body (``--json`` parts, else ``-d`` values) and the query (``-G`` moves ``-d``
    values into it), as curl sends them."""
    if parts.json_parts and (parts.data or parts.get):
        raise CurlError("--json cannot be combined with -d or -G")
    if parts.json_parts:
        return "".join(parts.json_parts), raw_query
    if parts.data and parts.get:
        return None, "&".join(p for p in (raw_query, *parts.data) if p)
    if parts.data:
        return "&".join(parts.data), raw_query
    return None, raw_query


def _options(args: list[str]) -> Iterator[tuple[str, str, str]]:
    """Yield (flag, kind, value) per option, a positional word as kind "url"; refuse the rest."""
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            yield arg, "url", arg
            continue
        cluster: list[tuple[str, str | None, str]] = []
        if arg.startswith("--"):
            cluster.append((arg, _LONG.get(arg), ""))
        else:  # a cluster such as -sS, -XPOST or -H'Name: value'
            for j, ch in enumerate(arg[1:], start=2):
                kind = _SHORT.get(ch)
                cluster.append((f"-{ch}", kind, arg[j:] if kind in _TAKES_VALUE else ""))
                if kind is None or kind in _TAKES_VALUE:
                    break
        for flag, kind, value in cluster:
            if kind is None:
                why = _WHY.get(flag, f"it is not supported (allowed: {_ALLOWED_FLAGS})")
                raise CurlError(f"curl option {_show(flag)} is refused: {why}")
            if kind in _TAKES_VALUE and not value:
                if i >= len(args):
                    raise CurlError(f"curl option {_show(flag)} needs a value")
                value, i = args[i], i + 1
            yield flag, kind, value


def _data(flag: str, kind: str, value: str, data: list[str], json_parts: list[str]) -> None:
    """Add one -d/--data*/--json value in curl's wire form, refusing curl's ``@file`` reads."""
    if kind == "data-urlencode":
        name, eq, content = value.partition("=")
        if not eq and "@" in value:
            raise CurlError(f"{flag} {_show(value)} would read a local file")
        if not eq:
            name, content = "", value
        value = (name + "=" if name else "") + quote(content, safe="")
    elif kind != "data-raw" and value.startswith("@"):
        raise CurlError(f"{flag} {_show(value)} would read a local file")
    (json_parts if kind == "json" else data).append(value)


def _header(value: str) -> tuple[str, str]:
    """``'Name: value'`` -> ``("name", "value")``; refuses ``@file`` and hop-by-hop headers."""
    if value.startswith("@"):
        raise CurlError(f"-H {_show(value)} would read a local file")
    name, colon, content = value.partition(":")
    name = name.strip()
    if not colon or not _TCHAR.fullmatch(name):
        raise CurlError(f"header {_show(value)} is not 'Name: value'")
    if name.lower() in _REFUSED_HEADERS:
        raise CurlError(f"header {name} may not be set; it comes from the URL and body")
    content = content.strip(" \t")
    if not content.isascii():
        raise CurlError(f"header {name} has a non-ASCII value {_show(content)}; encode it")
    return name.lower(), content


def _split_url(url: str, allowed: frozenset[str] | None) -> tuple[str, str, str, str]:
    """Check the URL and return (scheme, host[:port], decoded path, raw query)."""
    if not re.match(r"(?i)https?://", url):
        raise CurlError(f"URL must start with https:// or http:// (got {_show(url)})")
    if any(c.isspace() for c in url) or "\\" in url:
        raise CurlError(f"URL {_show(url)} contains whitespace or a backslash; encode it")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise CurlError(f"URL {_show(url)} is malformed") from exc
    if not parts.netloc.isascii():  # before lower(): 'K' (Kelvin sign) would become 'k'
        raise CurlError(f"URL host {_show(parts.netloc)} must be plain ASCII")
    netloc = parts.netloc.lower()
    if "@" in netloc:
        raise CurlError("URL must not contain user info (user@host)")
    host, colon, port = netloc.partition(":")
    if not _HOST.fullmatch(host):
        raise CurlError(f"URL host {_show(host)} is not a DNS name or IPv4 address")
    if colon:
        if not re.fullmatch(r"[0-9]{1,5}", port) or not 0 < int(port) < 65536:
            raise CurlError(f"URL port {_show(port)} is not a port number")
        host = f"{host}:{int(port)}"
        if allowed is None:
            raise CurlError(f"URL port {port} is not allowed; use the API's default port")
    if allowed is not None and host not in allowed:
        expected = ", ".join(sorted(allowed)) or "none"
        raise CurlError(f"host {host} is not this task's API (expected {expected})")
    path = unquote(parts.path) or "/"
    if _CONTROL.search(path) or "\t" in path:
        raise CurlError("URL path contains an encoded control character")
    if any(seg in (".", "..") for seg in path.split("/")):
        raise CurlError("URL path must not contain '.' or '..' segments")
    return parts.scheme.lower(), host, path, parts.query


def _encodable(text: str) -> bool:
    """False for text with lone surrogates, which quote() and encode() would choke on."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _show(value: str | bytes, limit: int = 60) -> str:
    """A short repr of user text for an error message (repr escapes newlines: one line)."""
    return repr(value[:limit]) + ("..." if len(value) > limit else "")
