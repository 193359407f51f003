"""No module of toolbench imports itself back, directly or through others.

A cycle is a strongly connected component of the module graph that grimp (import-linter's own
reader) builds from the source: every import counts, at module top, inside a function (a
deferred import hides a cycle, it does not remove it) and under ``if TYPE_CHECKING:`` (it
still ties the two modules' designs together). The graph is read twice, with and without the
TYPE_CHECKING imports, so a cycle that exists at run time is named as such.

A failure lists each cycle with the imports that close it (file:line), so the fix can start
from the message.
"""

from __future__ import annotations

from collections.abc import Iterable

import grimp
import pytest

# No cycle is allowed. ``unexpected_cycles`` takes an allow-list so that a branch in the middle
# of removing one can name it exactly (a cycle that grows or merges with another still fails).
_ALLOWED: set[frozenset[str]] = set()


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm,
    iterative: the package's import chains are deeper than Python's recursion limit allows
    for comfort), sorted by their first module so a report reads the same every run."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    imported = graph.find_modules_directly_imported_by(successor)
                    work.append((successor, iter(sorted(imported))))
                    break
                if successor in on_stack:
                    low[module] = min(low[module], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return sorted(found, key=sorted)


def unexpected_cycles(
    graph: grimp.ImportGraph, allowed: Iterable[frozenset[str]]
) -> list[frozenset[str]]:
    """The graph's cycles that are not exactly one of ``allowed``."""
    known = set(allowed)
    return [cycle for cycle in import_cycles(graph) if cycle not in known]


def describe(graph: grimp.ImportGraph, cycle: frozenset[str]) -> str:
    """One cycle as its modules and the imports between them, each with its file line."""
    lines = [f"cycle of {len(cycle)} modules: {', '.join(sorted(cycle))}"]
    for importer in sorted(cycle):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & cycle):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(
                    f"  {importer}:{detail['line_number']}: {detail['line_contents'].strip()}"
                )
    return "\n".join(lines)


@pytest.mark.parametrize(
    "exclude_type_checking", [False, True], ids=["with-type-checking-imports", "run-time-only"]
)
def test_no_module_imports_itself_back(exclude_type_checking: bool) -> None:
    graph = grimp.build_graph(
        "toolbench", exclude_type_checking_imports=exclude_type_checking, cache_dir=None
    )
    assert len(graph.modules) > 100  # the package itself was read, not an empty stand-in
    cycles = unexpected_cycles(graph, _ALLOWED)
    report = "\n".join(describe(graph, cycle) for cycle in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s); restructure, don't defer:\n{report}"


def _graph(imports: dict[str, list[str]]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports.items():
        graph.add_module(importer)
        for other in imported:
            graph.add_module(other)
            graph.add_import(importer=importer, imported=other, line_number=7, line_contents="x")
    return graph


def test_cycle_finder_finds_each_component_and_nothing_else() -> None:
    graph = _graph(
        {
            "p.a": ["p.b"],
            "p.b": ["p.c", "p.d"],
            "p.c": ["p.a"],  # a -> b -> c -> a
            "p.d": ["p.e"],
            "p.e": ["p.d", "p.f"],  # d <-> e, reached from the first cycle
            "p.f": [],
            "p.g": ["p.a", "p.f"],  # imports into a cycle, is not in one
        }
    )
    assert import_cycles(graph) == [
        frozenset({"p.a", "p.b", "p.c"}),
        frozenset({"p.d", "p.e"}),
    ]
    assert import_cycles(_graph({"p.a": ["p.b"], "p.b": ["p.c"], "p.c": []})) == []


def test_a_long_chain_does_not_hit_the_recursion_limit() -> None:
    chain = {f"p.m{i}": [f"p.m{i + 1}"] for i in range(5000)}
    chain["p.m5000"] = ["p.m0"]
    assert import_cycles(_graph(chain)) == [frozenset(f"p.m{i}" for i in range(5001))]


def test_only_an_exactly_listed_cycle_is_allowed() -> None:
    graph = _graph({"p.a": ["p.b"], "p.b": ["p.a", "p.c"], "p.c": ["p.b"], "p.x": ["p.y"]})
    cycle = frozenset({"p.a", "p.b", "p.c"})
    assert unexpected_cycles(graph, []) == [cycle]
    assert unexpected_cycles(graph, [cycle]) == []
    # the allow-list named the cycle before p.c joined it: the grown cycle fails
    assert unexpected_cycles(graph, [frozenset({"p.a", "p.b"})]) == [cycle]
    # another engineer's cycle on the list does not excuse a new one
    assert unexpected_cycles(graph, _ALLOWED) == [cycle]


def test_the_report_names_the_imports_that_close_the_cycle() -> None:
    graph = _graph({"p.a": ["p.b"], "p.b": ["p.a"]})
    text = describe(graph, frozenset({"p.a", "p.b"}))
    assert text.splitlines() == [
        "cycle of 2 modules: p.a, p.b",
        "  p.a:7: x",
        "  p.b:7: x",
    ]
