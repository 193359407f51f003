from hypothesis import given
from hypothesis import strategies as st

from toolbench.prompts.extract import extract_program

PROGRAM = 'API.set_location("Austin")\nAPI.set_buy_or_rent("buy")\nAPI.search()'


def test_completion_text_is_kept_as_is() -> None:
    assert extract_program(f"  {PROGRAM}\n\n") == PROGRAM


def test_fenced_block_is_taken_from_chat_reply() -> None:
    reply = f"Sure! Here is the program:\n```python\n{PROGRAM}\n```\nLet me know."
    assert extract_program(reply) == PROGRAM


def test_unterminated_fence_still_yields_code() -> None:
    assert extract_program(f"```\n{PROGRAM}") == PROGRAM


def test_leading_and_trailing_prose_is_dropped() -> None:
    reply = f"Here is what I would run.\n{PROGRAM}\nThis searches homes in Austin."
    assert extract_program(reply) == PROGRAM


def test_prose_only_reply_is_returned_unchanged() -> None:
    assert extract_program("I cannot help with that.") == "I cannot help with that."


@given(st.text(max_size=400))
def test_extraction_never_raises(text: str) -> None:
    assert isinstance(extract_program(text), str)
