"""Writes our v0 and v1 data folders: test.jsonl (goal ids), functions/ and examples/.

``python -m toolbench.tasks.web_shop.build_data`` rewrites them byte for byte (the tests check
that the committed files are what this writes). v0 and v1 share the test ids and differ in
the page layout their demonstrations (and episodes) use: v0 WebShop's ``[SEP]`` text, v1 the
``[button]`` lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolbench.data.examples import format_example
from toolbench.tasks.web_shop.docs import FUNCTIONS, demonstrations
from toolbench.tasks.web_shop.world import Store

DATA_DIR = Path(__file__).parent / "data"
TEST_IDS = range(250)  # the first goals of the shuffled list, as WebShop's test split


def folder_files(store: Store, version: str) -> dict[str, str]:
    """Relative path -> text of one version's folder."""
    files = {"test.jsonl": "".join(json.dumps({"id": i}) + "\n" for i in TEST_IDS)}
    for name, text in FUNCTIONS.items():
        files[f"functions/{name}"] = text.strip() + "\n"
    for number, (page, action) in enumerate(demonstrations(store, version)):
        files[f"examples/{number}.txt"] = format_example(page, action)
    return files


def main() -> None:
    store = Store.load()
    for version in ("v0", "v1"):
        for relative, text in folder_files(store, version).items():
            path = DATA_DIR / version / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {DATA_DIR / version}")


if __name__ == "__main__":
    main()
