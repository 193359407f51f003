"""Loading a task's data folder (ours, or a user's in the original layout), shared by all tasks.

Gold answers are not executed here: each kind of task does that in its own way, after loading.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.core.task import TaskBase, TaskData
from toolbench.data.layout import digest_folder, read_docs, read_test_jsonl
from toolbench.errors import UserError
from toolbench.types import TaskContext


class OfflineFolderTask(TaskBase):
    """For offline tasks whose data sits in their package's ``data/<version>/`` folders: the
    versions found there, and ``--live`` refused with one line (four tasks repeated both)."""

    name: str
    package_dir: Path

    def versions(self) -> list[str]:
        return package_versions(self.package_dir)

    def refuse_live(self, live: object | None) -> None:
        if live is not None:
            raise UserError(f"task {self.name} has no live API (--live is for HTTP tasks)")


def package_versions(package_dir: Path) -> list[str]:
    data = package_dir / "data"
    return sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []


def resolve_folder(name: str, package_dir: Path, version: str, data_dir: Path | None) -> Path:
    """Where test.jsonl lives: ours, or the user's folder in the original layout."""
    if data_dir is None:
        folder = package_dir / "data" / version
        if not folder.is_dir():
            raise UserError(
                f"task {name} has no version {version!r}; "
                f"available: {', '.join(package_versions(package_dir))}"
            )
        return folder
    candidates = [
        data_dir / name / version,
        data_dir / "data" / name / version,
        data_dir / version,
        data_dir,
    ]
    for folder in candidates:
        if (folder / "test.jsonl").is_file():
            return folder
    raise UserError(
        f"--data-dir {data_dir}: no {name}/{version}/test.jsonl inside; "
        "point it at a folder in the ToolBench layout <root>/<task>/<version>/test.jsonl"
    )


def load_folder(name: str, package_dir: Path, version: str, data_dir: Path | None) -> TaskData:
    """Samples, prompt context and content digest; functions/ and examples/ fall back to ours."""
    folder = resolve_folder(name, package_dir, version, data_dir)
    ours = package_dir / "data" / version
    functions_dir = folder / "functions" if (folder / "functions").is_dir() else ours / "functions"
    examples_dir = folder / "examples" if (folder / "examples").is_dir() else ours / "examples"
    samples = read_test_jsonl(folder / "test.jsonl", name)
    context = TaskContext(functions=read_docs(functions_dir), examples=read_docs(examples_dir))
    files = [folder / "test.jsonl", *_files(functions_dir), *_files(examples_dir)]
    return TaskData(
        task=name,
        version=version,
        samples=samples,
        context=context,
        source=str(folder),
        digest=digest_folder(files),
    )


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
