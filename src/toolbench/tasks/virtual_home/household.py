"""The household's state: a scene (where everything starts), the state a plan changes, the
failure of a line whose preconditions do not hold, and what a load keeps per sample
(``Runtime``, the task's ``TaskData.runtime``). The action table (``actions``) and the
plan runner (``world``) are built on it; a module of its own so that neither imports the
other's importer (``world`` runs plans with ``actions``, which changes a ``State``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.virtual_home.grounding import AllowLists
from toolbench.tasks.virtual_home.vocab import ROOMS

MAX_HELD = 2
Loc = tuple[str, str]  # ("on"|"in", parent) | ("room", room) | ("held", "") | ("worn", "")


@dataclass(frozen=True)
class Scene:
    """A household's starting state; immutable, shared by every plan run in it."""

    rooms: tuple[str, ...]
    agent_room: str
    props: Mapping[str, frozenset[str]]
    loc: Mapping[str, Loc]
    flags: Mapping[str, frozenset[str]]  # object -> subset of {"open", "on", "dirty"}
    sitting: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Scene:
        """``{"rooms", "agent", "objects": {name: {"props", "room"|"on"|"in"|"worn"|"held",
        "state"}}, "sitting"?}``; a ``KeyError``/``ValueError`` names what is wrong."""
        props: dict[str, frozenset[str]] = {}
        loc: dict[str, Loc] = {}
        flags: dict[str, frozenset[str]] = {}
        for name, obj in raw["objects"].items():
            props[name] = frozenset(obj.get("props", ()))
            flags[name] = frozenset(obj.get("state", ()))
            for key in ("on", "in", "room"):
                if key in obj:
                    loc[name] = (key, str(obj[key]))
                    break
            else:
                which = "worn" if obj.get("worn") else "held" if obj.get("held") else None
                if which is None:
                    raise ValueError(f"object {name!r} has no place (room, on, in, worn, held)")
                loc[name] = (which, "")
        rooms = tuple(raw["rooms"])
        scene = cls(rooms, str(raw["agent"]), props, loc, flags, raw.get("sitting"))
        scene.validate()
        return scene

    def validate(self) -> None:
        if self.agent_room not in self.rooms:
            raise ValueError(f"agent room {self.agent_room!r} is not one of the rooms")
        for name, (kind, parent) in self.loc.items():
            if kind == "room" and parent not in self.rooms:
                raise ValueError(f"{name!r} is in unknown room {parent!r}")
            if kind in ("on", "in") and parent not in self.loc:
                raise ValueError(f"{name!r} is {kind} unknown object {parent!r}")
        if sum(1 for kind, _ in self.loc.values() if kind == "held") > MAX_HELD:
            raise ValueError(f"the agent holds more than {MAX_HELD} objects")

    def to_json(self) -> dict[str, Any]:
        objects: dict[str, Any] = {}
        for name in sorted(self.loc):
            kind, parent = self.loc[name]
            obj: dict[str, Any] = {"props": sorted(self.props[name])}
            obj.update({kind: parent} if parent else {kind: True})
            if self.flags[name]:
                obj["state"] = sorted(self.flags[name])
            objects[name] = obj
        out: dict[str, Any] = {"rooms": list(self.rooms), "agent": self.agent_room}
        if self.sitting:
            out["sitting"] = self.sitting
        out["objects"] = objects
        return out


@dataclass
class State:
    """The mutable state of one run (a fresh one per plan)."""

    scene: Scene
    room: str
    loc: dict[str, Loc]
    flags: dict[str, set[str]]
    near: str | None = None
    sitting: str | None = None
    events: set[tuple[str, str]] = field(default_factory=set)
    touched: dict[str, set[str]] = field(default_factory=dict)  # action kind -> objects

    @classmethod
    def start(cls, scene: Scene) -> State:
        flags = {name: set(value) for name, value in scene.flags.items()}
        return cls(scene, scene.agent_room, dict(scene.loc), flags, sitting=scene.sitting)

    @property
    def held(self) -> list[str]:
        return [name for name, (kind, _) in self.loc.items() if kind == "held"]

    def chain(self, name: str) -> list[str]:
        """The object and everything it stands on or in, innermost first."""
        out = [name]
        while self.loc[out[-1]][0] in ("on", "in") and len(out) < 50:
            out.append(self.loc[out[-1]][1])
        return out

    def room_of(self, name: str) -> str:
        kind, parent = self.loc[self.chain(name)[-1]]
        return parent if kind == "room" else self.room  # held or worn: with the agent

    def reachable(self, name: str) -> bool:
        """Within reach: held, or the agent stands at it, at what it is on or in, or at
        something on or in it."""
        if self.loc[name][0] in ("held", "worn"):
            return True
        if self.near is None or self.room_of(name) != self.room:
            return False
        return self.near in self.chain(name) or name in self.chain(self.near)

    def closed_around(self, name: str) -> str | None:
        """The closed container this object is inside, if any."""
        for outer_kind, outer in zip(
            [self.loc[n][0] for n in self.chain(name)[:-1]], self.chain(name)[1:], strict=True
        ):
            props = self.scene.props[outer]
            if outer_kind == "in" and "openable" in props and "open" not in self.flags[outer]:
                return outer
        return None


class Failure(Exception):
    """A precondition that does not hold; the message is the readable reason."""


def is_room(name: str, scene: Scene) -> bool:
    return name in scene.rooms or (name in ROOMS and name not in scene.loc)


@dataclass
class Runtime:
    """A load's allow-lists, each sample's stored scene, and its grounded gold lines."""

    allow: AllowLists
    scenes: dict[str, Scene | None] = field(default_factory=dict)  # None: derive from golds
    labels: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)  # grounded
