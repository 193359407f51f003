"""Tool removal for our own tasks: take away the API the gold answer cannot do without.

What to remove, per kind of task:

* curl tasks: the endpoint the gold calls *and every doc for the same method and path*
  (``current_weather_city``, ``_coords`` and ``_zip`` are all ``GET /data/2.5/weather``), so the
  request cannot be served by re-spelling it for a sibling doc.
* Python tasks: one API that every gold of the sample calls. APIs that every sample of the
  task calls (``set_location``, ``search``...) are only a fallback: removing the one that
  serves *this* request ("set_num_garages" for "with one garage") is the informative case.
  When the golds share no API (google_sheets has gspread and pandas golds for one request), a
  smallest set of APIs that hits every gold is removed.

* Tasks that name what a request cannot do without (``needed_apis`` in the provenance notes:
  virtual_home derives them from the chore's goals and scene) lose one of those groups:
  every action that can make one goal true (``Put`` for "the mug on the table"; all of
  ``Wash``/``Scrub``/``Rinse``/``Wipe`` for "clean the plate", since they are alternative
  routes). Moving actions (``WalkTo``/``Find``) are never taken: each replaces the other.

Curl, home_search/booking and virtual_home twins are exact by construction. google_sheets twins stay
``pending``: its worksheet offers general-purpose writes (``update``, ``batch_update``) that may
still serve the request another way, which only a person can rule out.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Sequence

from toolbench.aware.manipulate.slot_removal import BuildResult
from toolbench.aware.manipulate.twin import incomplete_twin
from toolbench.aware.schema import ApiSpec, Instance, Verification
from toolbench.aware.sources.task_apis import apis_used

#: Docs that build argument values rather than act (booking's Loc and Date).
_VALUE_CONSTRUCTORS = {"Loc", "Date"}
_NEEDS_REVIEW = {"task:google_sheets"}


def _endpoint_key(api: ApiSpec) -> tuple[str, str] | None:
    template = str(api.origin.get("template", ""))
    url = re.search(r"'https?://[^/']+([^?']*)", template)
    if api.origin.get("kind") != "curl" or url is None:
        return None
    method = re.search(r"-X\s+(\w+)", template)
    return (method.group(1) if method else "GET", url.group(1))


def _curl_removal(instance: Instance) -> list[str]:
    by_name = {api.name: api for api in instance.apis}
    keys = {_endpoint_key(by_name[name]) for name in instance.relevant_apis}
    return [api.name for api in instance.apis if _endpoint_key(api) in keys]


def _hitting_set(gold_sets: list[set[str]], prefer: Callable[[str], tuple[int, str]]) -> list[str]:
    """Greedy smallest set of names meeting every gold's set (ties broken by ``prefer``)."""
    chosen: list[str] = []
    left = [s for s in gold_sets if s]
    while left:
        counts = Counter(name for s in left for name in s)
        best = min(counts, key=lambda n: (-counts[n], *prefer(n)))
        chosen.append(best)
        left = [s for s in left if best not in s]
    return sorted(chosen)


def _needed_removal(instance: Instance, rng: random.Random) -> list[str]:
    """One group of the APIs the task says the request needs, as far as they are offered."""
    offered = {api.name for api in instance.apis}
    groups = [
        sorted(set(group) & offered)
        for group in instance.provenance.notes.get("needed_apis", [])
        if set(group) & offered
    ]
    return rng.choice(groups) if groups else []


def _python_removal(instance: Instance, universal: set[str], rng: random.Random) -> list[str]:
    if instance.provenance.notes.get("needed_apis"):
        return _needed_removal(instance, rng)
    gold_sets = [
        set(apis_used(gold, instance.apis)) - _VALUE_CONSTRUCTORS for gold in instance.gold_calls
    ]
    shared = set.intersection(*gold_sets) if gold_sets else set()
    specific = sorted(shared - universal)
    if specific:
        return [rng.choice(specific)]
    if shared:
        return [rng.choice(sorted(shared))]
    return _hitting_set(gold_sets, lambda n: (int(n in universal), n))


def universal_apis(instances: Sequence[Instance]) -> set[str]:
    """APIs that the first gold of every instance of a task uses."""
    sets = [set(instance.relevant_apis) for instance in instances]
    return set.intersection(*sets) if sets else set()


def remove_tool(instance: Instance, *, seed: int, universal: set[str]) -> Instance | None:
    rng = random.Random(f"{seed}:{instance.id}")
    if any(api.origin.get("kind") == "curl" for api in instance.apis):
        removed = _curl_removal(instance)
    else:
        removed = _python_removal(instance, universal, rng)
    if not removed:
        return None
    gone = set(removed)
    review = instance.source in _NEEDS_REVIEW
    return incomplete_twin(
        instance,
        "tool_removal",
        apis=[api for api in instance.apis if api.name not in gone],
        verification=Verification(
            status="pending" if review else "accepted", by="" if review else "construction"
        ),
        removed_apis=removed,
        missing="The API the request needs is not offered: " + ", ".join(removed) + " removed.",
        generator="tool_removal",
        seed=seed,
    )


def remove_tools(
    instances: Sequence[Instance], *, seed: int, progress: Callable[[int], None] | None = None
) -> BuildResult:
    """Twins for every task instance; ``universal`` APIs are computed per task."""
    by_source: dict[str, list[Instance]] = {}
    for instance in instances:
        by_source.setdefault(instance.source, []).append(instance)
    universal = {source: universal_apis(group) for source, group in by_source.items()}
    twins: list[Instance] = []
    skipped: list[tuple[str, str]] = []
    for instance in instances:
        if not instance.source.startswith("task:"):
            skipped.append((instance.id, "tool removal is for task instances"))
        elif twin := remove_tool(instance, seed=seed, universal=universal[instance.source]):
            twins.append(twin)
        else:
            skipped.append((instance.id, "the gold answer uses no offered API"))
        if progress is not None:
            progress(1)
    return BuildResult(twins, skipped)
