"""Hostile programs the sandbox must contain, as (name, source) pairs.

Each must fail (``ok=False``) with a kind from ``EXPECTED_KINDS`` and leave no trace outside
the worker. Programs that need ``Loc``/``Date`` are listed in ``BOOKING``; the rest run
against the home-search world. ``SENTINEL`` is a path no program may create.
"""

from __future__ import annotations

SENTINEL = "/tmp/toolbench_sandbox_sentinel"

HOSTILE_PROGRAMS: list[tuple[str, str]] = [
    # -- imports -------------------------------------------------------------------------------
    ("import_os", f"import os\nos.system('touch {SENTINEL}')"),
    ("dunder_import", "__import__('os').system('id')"),
    ("from_subprocess", f"from subprocess import run\nrun(['touch', '{SENTINEL}'])"),
    ("import_builtins_module", "import builtins\nbuiltins.open('/etc/passwd')"),
    ("import_after_except", "try:\n    import os\nexcept ImportError:\n    pass\nos.getcwd()"),
    ("import_signal", "import signal\nsignal.alarm(0)"),
    ("fork", "os.fork()"),
    # -- introspection -------------------------------------------------------------------------
    ("subclasses_walk", "().__class__.__bases__[0].__subclasses__()"),
    ("mro_getattr_walk", "getattr(Loc.mro()[-1], '__subclasses__')()"),
    ("getattr_private", "getattr(API, '_criteria')"),
    ("unicode_underscore", "API.\uff3fcriteria"),  # fullwidth low line: not an identifier
    ("getattr_class", "getattr(API, '__class__')"),
    ("getattr_func_globals", "getattr(getattr(API.set_location, '__func__'), '__globals__')"),
    ("format_attribute", "'{0.__class__.__init__.__globals__}'.format(API)"),
    ("format_map_attribute", "'{x.__class__}'.format_map({'x': API})"),
    ("unbound_str_format", "fmt = getattr(str, 'format')\nfmt('{0.__class__}', API)"),
    ("fstring_dunder", "f'{API.__class__}'"),
    ("fstring_spec_dunder", "f'{API!r:{API.__dict__}}'"),
    ("func_globals", "API.set_location.__globals__['ToolError']"),
    ("type_call", "type(API)"),
    ("vars_call", "vars(API)"),
    ("globals_call", "globals()['API']"),
    ("locals_call", "locals()"),
    ("dir_help", "dir(API)\nhelp(API)"),
    ("builtins_name", "__builtins__['open']"),
    ("generator_frame", "g = (x for x in ())\ng.gi_frame.f_globals"),
    ("generator_frame_getattr", "getattr((x for x in ()), 'gi_frame')"),
    ("traceback_frame", "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame"),
    ("attribute_error_obj", "try:\n    API.nope\nexcept AttributeError as e:\n    leak = e.obj"),
    ("lambda_default", "f = lambda g=API.set_location: g.__globals__\nf()"),
    ("reach_labels", "API.set_location(labels[0])"),
    ("reach_scorer", "score(sample)"),
    # -- code execution ------------------------------------------------------------------------
    ("exec_call", "exec('import os')"),
    ("eval_call", "eval('1')"),
    ("compile_call", "compile('1', 'x', 'eval')"),
    ("open_passwd", "open('/etc/passwd').read()"),
    ("write_file", f"open('{SENTINEL}', 'w').write('x')"),
    ("write_cwd_file", "open('pwned.txt', 'w').write('x')"),
    # -- tampering with the world --------------------------------------------------------------
    ("set_private", "API._criteria = {}"),
    ("monkeypatch_method", "API.search = lambda: None"),
    ("setattr_builtin", "setattr(API, 'search', None)"),
    ("loc_write", "loc = Loc('x')\nloc.location = 'y'"),
    ("loc_class_write", "Loc.location = 'y'"),
    ("print_to_api", "print('x', file=API)"),
    # -- resources -----------------------------------------------------------------------------
    ("infinite_loop", "while True:\n    pass"),
    (
        "swallowed_timeout",
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass",
    ),
    ("cpu_bomb", "x = 10 ** 10 ** 8"),
    ("c_level_infinite_loop", "any(iter(int, 1))"),  # never returns to the bytecode loop
    ("recursion_bomb", "def f(n):\n    return f(n + 1)\nf(0)"),
    ("memory_list", "x = [0] * 10 ** 10"),
    ("memory_str", "x = 'a' * 10 ** 11"),
    ("list_append_growth", "x = []\nwhile True:\n    x.append('y' * 4096)"),
    ("huge_print", "while True:\n    print('x' * 1000)"),
    ("huge_state", "API.set_location('x' * 10 ** 7)"),
    ("deep_parens", "x = " + "(" * 5000 + "1" + ")" * 5000),
    # -- exceptions ----------------------------------------------------------------------------
    ("system_exit", "raise SystemExit(0)"),
    ("keyboard_interrupt", "raise KeyboardInterrupt"),
    ("generator_exit", "raise GeneratorExit('bye')"),
    ("huge_message", "raise ValueError('line\\n' * 100000)"),
    ("unprintable_message", "raise ValueError(10 ** 5000)"),
    (
        "class_dunder_str",
        "class E(Exception):\n    def __str__(self):\n        while True:\n            pass\n"
        "raise E()",
    ),
    ("class_dunder_del", "class D:\n    def __del__(self):\n        D()\nd = D()"),
    (
        "class_hostile_eq",
        "class K:\n    def __eq__(self, other):\n        while True:\n            pass\n"
        "API.set_location('x')\nAPI.set_buy_or_rent(K())",
    ),
    (
        "generator_finally_loop",
        "def g():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\n"
        "it = g()\nnext(it)\nAPI.set_location('x')",
    ),
    (
        "subclass_simulator",
        "class FakeLoc(Loc):\n    location = 'forged'\nAPI.set_origin(FakeLoc('x'))",
    ),
    (
        "subclass_str",
        "class S(str):\n    def __eq__(self, other):\n        return True\n"
        "API.set_location('x')\nAPI.set_buy_or_rent(S('anything'))",
    ),
    ("syntax_error", "API.set_location("),
    ("nul_byte", "API.search()\x00"),
    ("async_def", "async def f():\n    await g()"),
]

BOOKING = {"mro_getattr_walk", "loc_write", "loc_class_write", "subclass_simulator"}

_ANY_ERROR = {"error", "rejected"}
EXPECTED_KINDS: dict[str, set[str]] = {
    "infinite_loop": {"timeout"},
    "swallowed_timeout": {"timeout"},
    "cpu_bomb": {"timeout"},
    "c_level_infinite_loop": {"timeout"},
    "class_hostile_eq": {"timeout"},
    "generator_finally_loop": {"timeout"},
    "memory_list": {"memory"},
    "memory_str": {"memory"},
    # Under load the worker may die inside C code before MemoryError surfaces: still contained.
    "list_append_growth": {"memory", "timeout", "worker_died"},
    "huge_print": {"output_limit"},
    "huge_state": {"output_limit"},
}


def expected_kinds(name: str) -> set[str]:
    return EXPECTED_KINDS.get(name, _ANY_ERROR)
