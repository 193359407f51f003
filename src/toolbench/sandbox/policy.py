"""What a restricted program can see and do, inside a worker process.

RestrictedPython rewrites the program at compile time: names and attributes starting with ``_``
are rejected, ``exec``/``eval`` calls are rejected, and every attribute read, item read,
attribute/item write, iteration, in-place operator and ``print`` becomes a call to a guard
function looked up by name (``_getattr_``, ``_write_``, ``_print_`` ...). This module supplies
those guards and a curated builtins dict; the program runs with nothing else in scope except the
world's namespace. The guards decide:

* attribute reads go through RestrictedPython's ``safer_getattr`` (no ``_`` names, no frame or
  code attributes, no ``str.format``), and may never yield a module not named exactly in the
  world's ``allowed_modules`` (an allowed package would otherwise hand out ``os`` as
  ``pkg.sub.os``, or internals such as ``pandas.io.common``);
* attribute and item writes succeed only on plain ``dict``/``list`` objects, on instances of
  classes the program defined itself and on the world's ``writable_types`` (plain value holders
  such as DataFrames), so simulator objects (``API``, ``Loc``, ``Date``) are read-only and the
  world changes only through its API, as a real service would; program classes may derive only
  from each other and from builtin exceptions;
* ``import`` works only for the world's ``allowed_modules`` (exact names);
* ``print`` output goes to a per-run buffer with a hard size cap.

Everything here runs in the worker; the parent process never imports program code.
"""

from __future__ import annotations

import builtins
import operator
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from RestrictedPython import safe_builtins
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    raise_,
    safer_getattr,
)

MESSAGE_CHARS = 300  # error messages are truncated to this many characters


class SandboxInterrupt(BaseException):
    """Raised into the program by the sandbox itself (limits); never an ordinary program error."""


class OutputLimitExceeded(SandboxInterrupt):
    """The program printed more than the output cap."""


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """Collapse whitespace and truncate, so a message fits one log line whatever its source."""
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_exception(exc: BaseException) -> str:
    """'TypeName: message' in one line.

    ``str(exc)`` runs arbitrary code (huge ints refuse to convert, program classes define
    methods), so it is guarded; a limit hit while formatting still propagates to the caller.
    """
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:
        message = "<message could not be formatted>"
    if type(message) is not str:  # pragma: no cover - str() always returns an exact str
        message = "<message could not be formatted>"
    return one_line(f"{name}: {message}" if message else name)


# -- guards ----------------------------------------------------------------------------------


def _module_allowed(module: types.ModuleType, allowed: frozenset[str]) -> bool:
    name = getattr(module, "__name__", None)
    return type(name) is str and name in allowed


# Names that hand out interpreter internals without a leading underscore (Cython functions'
# func_globals, frames and generators' frames), or library features that run their own
# unsandboxed interpreters or import modules by name (pandas Styler's jinja2 environment,
# plotting backends).
DENIED_ATTRIBUTES = frozenset(
    {
        *("func_globals", "func_code", "func_closure", "func_dict", "func_defaults"),
        *("f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace"),
        *("gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code"),
        *("tb_frame", "tb_next", "im_func", "im_self", "mro"),
        *("style", "env", "plot", "hist", "boxplot", "plotting"),
    }
)


def _is_namespace_dict(value: Any) -> bool:
    """A module's globals (reached through any alias): the builtins are one .get() away."""
    return type(value) is dict and "__builtins__" in value and "__name__" in value


_SHARED_CONTAINERS = (dict, list, set)
PROGRAM_MODULE = "__sandbox__"  # the __name__ programs run under, so their classes' __module__


def _is_library_owned(obj: Any) -> bool:
    if isinstance(obj, types.ModuleType):
        return True
    return isinstance(obj, type) and getattr(obj, "__module__", None) != PROGRAM_MODULE


def _make_getattr(allowed: frozenset[str]) -> Callable[..., Any]:
    def guarded_getattr(obj: Any, name: str, default: Any = raise_) -> Any:
        # AttributeError.obj hands out whatever object the failing lookup ran on, which may be
        # a simulator's private state when the error came from inside the simulator.
        if name == "obj" and isinstance(obj, AttributeError):
            raise AttributeError('"obj" of an AttributeError is not accessible in the sandbox')
        if name in DENIED_ATTRIBUTES:
            raise AttributeError(f"attribute {name!r} is not accessible in the sandbox")
        value = safer_getattr(obj, name, default)
        if _is_namespace_dict(value):
            raise AttributeError(f"the globals behind {name!r} are not accessible in the sandbox")
        if isinstance(value, types.ModuleType) and not _module_allowed(value, allowed):
            raise AttributeError(f"module {value.__name__!r} is not accessible in the sandbox")
        if type(value) in _SHARED_CONTAINERS and _is_library_owned(obj):
            # A module's or library class's dict/list/set (numpy.sctypeDict ...) lives as long
            # as the worker: a program gets a copy, so it cannot change what later programs see.
            return type(value)(value)
        return value

    return guarded_getattr


def _make_hasattr(getattr_: Callable[..., Any]) -> Callable[[Any, str], bool]:
    def guarded_hasattr(obj: Any, name: str) -> bool:
        try:
            getattr_(obj, name)
        except AttributeError:
            return False
        return True

    return guarded_hasattr


def _make_getitem(allowed: frozenset[str]) -> Callable[[Any, Any], Any]:
    def guarded_getitem(obj: Any, key: Any) -> Any:
        value = obj[key]
        if _is_namespace_dict(value):
            raise KeyError("module globals are not accessible in the sandbox")
        if isinstance(value, types.ModuleType) and not _module_allowed(value, allowed):
            raise KeyError(f"module {value.__name__!r} is not accessible in the sandbox")
        return value

    return guarded_getitem


def _make_import(allowed: frozenset[str]) -> Callable[..., types.ModuleType]:
    def guarded_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> types.ModuleType:
        if not allowed:
            raise ImportError("imports are not allowed")
        if (
            type(fromlist) is list
            and type(name) is str
            and level == 0
            and name.partition(".")[0] in allowed
        ):
            # C code of an allowed library importing its own helper (numpy's dtype repr imports
            # numpy._core._dtype): PyImport_Import passes a *list* fromlist, which no program can
            # (import statements pass None or a tuple), and the module goes to that C code.
            return builtins.__import__(name, None, None, fromlist, 0)
        if type(name) is not str or level != 0:
            raise ImportError("only absolute imports of allowed modules are possible")
        if name not in allowed:
            raise ImportError(f"import of {name!r} is not allowed (allowed: {sorted(allowed)})")
        module = builtins.__import__(name, None, None, fromlist, 0)
        if not fromlist:  # 'import a.b' binds 'a', which must be allowed as well
            top = name.partition(".")[0]
            if top not in allowed:
                raise ImportError(f"import of {top!r} is not allowed (allowed: {sorted(allowed)})")
        for item in fromlist or ():  # 'from pkg.sub import os' must not yield a foreign module
            if item == "*":
                raise ImportError(f"'from {name} import *' is not allowed; import names")
            value = getattr(module, item, None)
            if isinstance(value, types.ModuleType) and not _module_allowed(value, allowed):
                raise ImportError(f"importing {item!r} from {name!r} is not allowed")
            if type(value) in _SHARED_CONTAINERS:  # see guarded_getattr; use name.item instead
                raise ImportError(f"importing the shared {item!r} from {name!r} is not allowed")
        return module

    return guarded_import


def _apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


_INPLACE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "^=": operator.ixor,
    "|=": operator.ior,
    "@=": operator.imatmul,
}


def _inplacevar(op: str, target: Any, value: Any) -> Any:
    return _INPLACE_OPS[op](target, value)


class _ReadOnly:
    """What ``_write_`` returns for objects the program may not change: every write raises."""

    __slots__ = ("_what",)
    _what: str

    def __init__(self, obj: Any) -> None:
        object.__setattr__(self, "_what", type(obj).__name__)

    def _refuse(self, *args: Any) -> None:
        raise TypeError(f"{self._what} objects are read-only in the sandbox")

    __setattr__ = __delattr__ = __setitem__ = __delitem__ = _refuse


_WRITABLE_TYPES = (dict, list)

# RestrictedPython's safe set minus setattr/delattr (programs have no need to write attributes
# by name), plus the everyday builtins it leaves out only because they iterate without its
# per-item access checks, which this sandbox does not use.
_BASE_BUILTINS: dict[str, Any] = {
    name: value for name, value in safe_builtins.items() if name not in ("setattr", "delattr")
}
for _name in (
    *("all", "any", "ascii", "bin", "dict", "enumerate", "filter", "frozenset", "iter", "list"),
    *("map", "max", "min", "next", "reversed", "set", "sorted", "sum", "tuple", "zip"),
):
    _BASE_BUILTINS[_name] = getattr(builtins, _name)

_builtins_cache: dict[frozenset[str], dict[str, Any]] = {}


def builtins_for(allowed: frozenset[str]) -> dict[str, Any]:
    """The (shared, never program-reachable) builtins dict for worlds allowing these modules."""
    cached = _builtins_cache.get(allowed)
    if cached is None:
        getattr_ = _make_getattr(allowed)
        cached = dict(_BASE_BUILTINS)
        cached.update(
            getattr=getattr_,
            hasattr=_make_hasattr(getattr_),
            __import__=_make_import(allowed),
            _getattr_=getattr_,
            _getitem_=_make_getitem(allowed),
            _getiter_=iter,
            _iter_unpack_sequence_=guarded_iter_unpack_sequence,
            _unpack_sequence_=guarded_unpack_sequence,
            _apply_=_apply,
            _inplacevar_=_inplacevar,
        )
        _builtins_cache[allowed] = cached
    return cached


# -- per-run state ---------------------------------------------------------------------------


class OutputBuffer:
    """Collects print() output up to ``limit`` UTF-8 bytes; past that, every write raises."""

    __slots__ = ("limit", "overflow", "parts", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.overflow = False

    def write(self, text: str) -> None:
        if self.overflow:
            raise OutputLimitExceeded(f"print output exceeded {self.limit} bytes")
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if self.size + size > self.limit:
            self.parts.append(text[: max(0, self.limit - self.size)])
            self.size = self.limit
            self.overflow = True
            raise OutputLimitExceeded(f"print output exceeded {self.limit} bytes")
        self.parts.append(text)
        self.size += size

    def flush(self) -> None:
        pass

    def text(self) -> str:
        return "".join(self.parts)


class _Printer:
    """The object RestrictedPython's ``print`` rewriting calls (``_print_(_getattr_)``)."""

    def __init__(self, buffer: OutputBuffer, getattr_: Callable[..., Any]) -> None:
        self.buffer = buffer
        self.getattr_ = getattr_

    def _call_print(self, *objects: Any, **kwargs: Any) -> None:
        if kwargs.get("file") is None:
            kwargs["file"] = self.buffer
        else:
            self.getattr_(kwargs["file"], "write")
        print(*objects, **kwargs)

    def __call__(self) -> str:  # the value of the name ``printed``
        return self.buffer.text()


def _is_builtin_exception(base: Any) -> bool:
    return (
        isinstance(base, type)
        and issubclass(base, BaseException)
        and getattr(builtins, base.__name__, None) is base
    )


def make_globals(
    namespace: dict[str, Any],
    allowed: frozenset[str],
    output: OutputBuffer,
    writable: frozenset[type] = frozenset(),
) -> dict[str, Any]:
    """A fresh globals dict for one run: the world's names plus this run's guards.

    ``writable`` names further types (exact types, not subclasses) whose attributes and items a
    program may set, such as a DataFrame a program edits before writing it back."""
    program_classes: set[type] = set()

    def make_class(name: str, bases: tuple[type, ...], body: dict[str, Any]) -> type:
        # Subclassing a simulator class (or str, int ...) would let a program forge values the
        # API validates, or hand it objects whose methods the program chose.
        for base in bases:
            if base not in program_classes and not _is_builtin_exception(base):
                raise TypeError(f"classes in the sandbox cannot derive from {base!r}")
        cls = type(name, bases, body)
        program_classes.add(cls)
        return cls

    def write_guard(obj: Any) -> Any:
        kind = type(obj)
        if kind in _WRITABLE_TYPES or kind in program_classes or kind in writable:
            return obj
        return _ReadOnly(obj)

    scope = dict(namespace)
    scope.update(
        __builtins__=builtins_for(allowed),
        __name__=PROGRAM_MODULE,
        __metaclass__=make_class,
        _write_=write_guard,
        _print_=partial(_Printer, output),
    )
    return scope
