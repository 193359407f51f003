"""Reply extraction stays linear on hostile replies (see tests/worst_case.py for the shapes)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.worst_case import assert_linear
from toolbench.prompts import extract


def test_extract_program_is_linear_on_worst_case_shapes() -> None:
    assert_linear("reply extraction: extract_program")


def _first_fence_by_rescan(text: str) -> str | None:
    """The old scan (a search for the next line break from every fence): the reference."""
    start = text.find(extract.FENCE)
    while start != -1:
        newline = text.find("\n", start + 3)
        if newline == -1:
            return None
        header = text[start + 3 : newline]
        if len(header) <= extract.MAX_HEADER_CHARS and extract._HEADER.fullmatch(
            header.strip(" \t")
        ):
            end = text.find(extract.FENCE, newline + 1)
            return text[newline + 1 : end if end != -1 else len(text)]
        start = text.find(extract.FENCE, start + 1)
    return None


@given(
    st.lists(
        st.sampled_from(["`", "```", "\n", "py", " ", "x" * 30, "x" * 70, "-", "!", "\t"]),
        max_size=14,
    )
)
def test_fence_scan_finds_what_the_rescan_found(parts: list[str]) -> None:
    text = "".join(parts)
    assert extract._first_fenced_block(text) == _first_fence_by_rescan(text)
