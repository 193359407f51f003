"""Simulated home-search API (a Redfin-like search form).

The model's program fills a search form through setter calls; the final criteria dict is the
world state we score. Semantics follow the original ToolBench evaluator so scores are
comparable: ``set_location`` first, then ``set_buy_or_rent``, then any criterion; home types are
validated against the buy/rent choice, lower-cased, sorted and joined; ``search()`` fills
``min_price`` and ``min_square_feet`` with 0 when unset.

State lives in an underscore attribute, which restricted programs cannot reach: the only way
to change the world is through the API, as with a real service.
"""

from __future__ import annotations

from typing import Any

from toolbench.sandbox.world import ToolError, World

BUY_HOME_TYPES = ("house", "townhouse", "condo", "land", "multi-family", "mobile", "co-op")
RENT_HOME_TYPES = ("house", "townhouse", "condo", "apartment")
BUY_OR_RENT = ("buy", "rent")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ToolError(message)


class HomeSearchAPI:
    def __init__(self) -> None:
        self._criteria: dict[str, Any] = {}

    def _snapshot(self) -> dict[str, Any]:
        return dict(self._criteria)

    def _set_criterion(self, key: str, value: Any) -> None:
        _require(
            "buy_or_rent" in self._criteria,
            f"cannot set {key}: call set_buy_or_rent before setting other criteria",
        )
        self._criteria[key] = value

    def clear(self) -> None:
        self._criteria = {}

    def set_location(self, value: str) -> None:
        _require(
            not self._criteria,
            "set_location must be the first call, before any other criterion is set",
        )
        self._criteria["location"] = value

    def set_buy_or_rent(self, value: str) -> None:
        _require(value in BUY_OR_RENT, f"set_buy_or_rent takes 'buy' or 'rent', not {value!r}")
        _require("location" in self._criteria, "call set_location before set_buy_or_rent")
        _require(
            len(self._criteria) == 1,
            "set_buy_or_rent must come right after set_location, before other criteria",
        )
        self._criteria["buy_or_rent"] = value

    def select_home_type(self, home_types: list[str]) -> None:
        _require(
            "buy_or_rent" in self._criteria,
            "cannot select home types: call set_buy_or_rent first",
        )
        _require(
            isinstance(home_types, (list, tuple)) and all(isinstance(t, str) for t in home_types),
            "select_home_type takes a list of home type names",
        )
        allowed = RENT_HOME_TYPES if self._criteria["buy_or_rent"] == "rent" else BUY_HOME_TYPES
        lowered = sorted(t.lower() for t in home_types)
        for home_type in lowered:
            _require(
                home_type in allowed,
                f"{home_type!r} is not a valid home type to {self._criteria['buy_or_rent']}; "
                f"choose from {', '.join(allowed)}",
            )
        self._criteria["home_type"] = ",".join(lowered)

    def set_min_price(self, value: int) -> None:
        self._set_criterion("min_price", value)

    def set_max_price(self, value: int) -> None:
        self._set_criterion("max_price", value)

    def set_min_square_feet(self, value: int) -> None:
        self._set_criterion("min_square_feet", value)

    def set_max_square_feet(self, value: int) -> None:
        self._set_criterion("max_square_feet", value)

    def set_num_beds(self, value: int) -> None:
        self._set_criterion("num_beds", value)

    def set_num_baths(self, value: float) -> None:
        self._set_criterion("num_baths", value)

    def set_num_garages(self, value: int) -> None:
        self._set_criterion("num_garages", value)

    def set_num_swimming_pools(self, value: int) -> None:
        self._set_criterion("num_swimming_pools", value)

    def set_floor_number(self, value: int) -> None:
        self._set_criterion("floor_number", value)

    def set_num_balconies(self, value: int) -> None:
        self._set_criterion("num_balconies", value)

    def set_max_commute_time(self, value: int) -> None:
        self._set_criterion("max_commute_time", value)

    def search(self) -> None:
        self._criteria.setdefault("min_price", 0)
        self._criteria.setdefault("min_square_feet", 0)


# No libraries, a fresh API object per program and nothing mutable reachable: programs may
# share a program process (see toolbench.sandbox._template).
SANDBOX_SHARED = True


def make_world() -> World:
    api = HomeSearchAPI()
    return World(namespace={"API": api}, snapshot=api._snapshot)
