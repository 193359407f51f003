"""WebShop's action grammar stays linear on hostile actions."""

from __future__ import annotations

from tests.worst_case import assert_linear


def test_parse_action_is_linear_on_worst_case_shapes() -> None:
    assert_linear("web_shop action grammar: parse_action")
