"""Task folders: find tasks by name or path (the built-in synthetic suite plus task folders
under a data dir; the published task catalogue is :mod:`geneb.tasks.catalogue`).

Resolution order of ``resolve_task(name_or_path)``: an existing folder path or GENEB task
file (``<id>.csv``, :mod:`geneb.tasks.geneb_csv`), else a built-in synthetic name (``syn_*``),
else a folder of that name under ``data_dir`` (default: the ``GENEB_DATA_DIR`` environment
variable) or a GENEB task file ``<name>.csv`` there (a data dir may be a collection of them),
else a task fetched into the cache (``geneb tasks fetch``; ``$GENEB_CACHE``, default
``~/.cache/geneb``), else, for an alias of a catalogue task (a GENEB task id,
:mod:`geneb.tasks.aliases`), that catalogue task found the same way, provided its data are
not known to differ from the catalogue entry (:mod:`geneb.tasks.matching`), else an error
listing what exists (and, for a catalogue task not fetched yet, the command that fetches it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from geneb.errors import GenebError, TaskError, unknown_name
from geneb.protocol import TRAIN_ROW_CAP, UNCATEGORIZED
from geneb.tasks.cache import fetched_folders
from geneb.tasks.geneb_csv import collection_files, load_geneb_csv
from geneb.tasks.loader import (
    SPLIT_ORDER,
    TASK_JSON,
    check_task_name,
    load_task_folder,
    read_task_json,
)
from geneb.tasks.readers import FASTA_EXTENSIONS, split_sources
from geneb.tasks.spec import Task, TaskSpec
from geneb.tasks.synthetic import (
    DEFAULT_N_TEST,
    DEFAULT_N_TRAIN,
    SYNTHETIC_TASK_NAMES,
    build_synthetic_task,
    synthetic_spec,
)
from geneb.vocabulary import CLASSIFICATION

DATA_DIR_ENV = "GENEB_DATA_DIR"


def default_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """``data_dir`` if given, else ``$GENEB_DATA_DIR``, else None."""
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env).expanduser() if env else None


def is_task_folder(path: Path) -> bool:
    """A directory with a task.json or a train split in a supported form."""
    if not path.is_dir() or path.name.startswith("."):
        return False
    if (path / TASK_JSON).is_file():
        return True
    names = ["train.csv", "train.parquet", *(f"train{e}" for e in FASTA_EXTENSIONS)]
    return any((path / n).is_file() for n in names) or (path / "train").is_dir()


def task_folders(data_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Task folders directly under the data dir, by folder name (sorted)."""
    root = default_data_dir(data_dir)
    if root is None:
        return {}
    if not root.is_dir():
        raise TaskError(f"data dir {root} does not exist or is not a directory")
    return {p.name: p for p in sorted(root.iterdir()) if is_task_folder(p)}


def _looks_like_path(name: str) -> bool:
    return os.sep in name or "/" in name or name.startswith((".", "~"))


def task_files(data_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """GENEB task files directly under the data dir (a collection), by task id (sorted)."""
    root = default_data_dir(data_dir)
    return collection_files(root) if root is not None and root.is_dir() else {}


def _load_path(path: Path, train_row_cap: int | None) -> Task:
    if path.is_dir():
        files = collection_files(path)
        if files and not is_task_folder(path):
            shown = ", ".join(list(files)[:5]) + (" ..." if len(files) > 5 else "")
            raise TaskError(
                f"{path} is a collection of {len(files)} GENEB task files ({shown}), not one "
                f"task; name one file, or give the folder as the data dir (data_dir=...)"
            )
        return load_task_folder(path, train_row_cap=train_row_cap)
    if path.suffix == ".csv":  # its columns are checked, and named when one is missing
        return load_geneb_csv(path, train_row_cap=train_row_cap)
    raise TaskError(
        f"{path} is a file but not a GENEB task file (a .csv with columns text, label, split); "
        f"a task is a folder (train.csv, test.csv, ...) or such a file"
    )


def resolve_task(
    name_or_path: str,
    data_dir: str | None = None,
    *,
    train_row_cap: int | None = TRAIN_ROW_CAP,
) -> Task:
    """Load a task by path, built-in synthetic name, name under the data dir, fetched name or
    alias (see the module docstring for the order)."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        return _load_path(path, train_row_cap)
    if name_or_path in SYNTHETIC_TASK_NAMES:
        return build_synthetic_task(name_or_path, train_row_cap=train_row_cap)
    if _looks_like_path(name_or_path):
        raise TaskError(f"task folder {name_or_path} not found")
    found = _by_name(name_or_path, data_dir, train_row_cap)
    if found is not None:
        return found
    alias = _by_alias(name_or_path, data_dir, train_row_cap)
    if alias is not None:
        return alias
    folders, files, fetched = task_folders(data_dir), task_files(data_dir), fetched_folders()
    root = default_data_dir(data_dir)
    err = unknown_name("task", name_or_path, [*SYNTHETIC_TASK_NAMES, *folders, *files, *fetched])
    where = (
        f"task folders under {root}"
        if root
        else f"no data dir given (data_dir=... or ${DATA_DIR_ENV})"
    )
    raise type(err)(f"{err} ({where}){_catalogue_hint(name_or_path)}")


def _by_name(name: str, data_dir: str | None, train_row_cap: int | None) -> Task | None:
    """The task of this name under the data dir (folder, task.json name, GENEB task file) or
    in the cache of fetched tasks; None when there is none."""
    folders = task_folders(data_dir)
    if name in folders:
        return load_task_folder(folders[name], train_row_cap=train_row_cap)
    for folder in folders.values():  # a task.json may name the task unlike its folder
        if (folder / TASK_JSON).is_file() and read_task_json(folder).get("name") == name:
            return load_task_folder(folder, train_row_cap=train_row_cap)
    files = task_files(data_dir)
    if name in files:
        return load_geneb_csv(files[name], train_row_cap=train_row_cap)
    fetched = fetched_folders()
    if name in fetched:
        return load_task_folder(fetched[name], train_row_cap=train_row_cap)
    return None


def _by_alias(alias: str, data_dir: str | None, train_row_cap: int | None) -> Task | None:
    """The catalogue task ``alias`` names (a GENEB id), found by its catalogue name under the
    data dir, else in the cache; a copy whose data differ from the catalogue entry's is
    passed over, and when every copy differs that is a one-line refusal."""
    from geneb.tasks.aliases import alias_map
    from geneb.tasks.matching import catalogue_match

    hit = alias_map().get(alias)
    if hit is None:
        return None
    name, study = hit
    refused = None
    for task in (_by_name(name, data_dir, train_row_cap), _fetched(name, train_row_cap)):
        if task is None:
            continue
        match = catalogue_match(task)
        if match["entry"] in (None, name) and name not in match["differs_from"]:
            return task
        why = match["differs_from"].get(name) or f"it is {match['entry']} ({match['detail']})"
        refused = refused or (
            f"{alias!r} is {study}'s name for catalogue task {name!r}, but {task.spec.path} "
            f"is not that task: {why}; fetch it (geneb tasks fetch {name}), or name that "
            f"folder by its own name"
        )
    if refused:
        raise TaskError(refused)
    return None


def _fetched(name: str, train_row_cap: int | None) -> Task | None:
    folder = fetched_folders().get(name)
    return None if folder is None else load_task_folder(folder, train_row_cap=train_row_cap)


def _catalogue_hint(name: str) -> str:
    """For a catalogue task that is not fetched: the command that fetches it, or why not."""
    from geneb.tasks.aliases import catalogue_name_for
    from geneb.tasks.catalogue import load_task_catalogue

    asked, name = name, catalogue_name_for(name) or name
    entry = next((e for e in load_task_catalogue() if e.name == name), None)
    if entry is None:
        return ""
    if entry.kind != CLASSIFICATION:
        return f". {name!r} is a variant set of the task catalogue, not a classification task"
    why = entry.fetchable()
    # a GENEB id also names GENEB's own copy of the task (geneb.tasks.geneb_copies)
    copy = f" (GENEB's own copy: geneb tasks fetch --study-data {asked})" if asked != name else ""
    if why is None:
        return (f". {name!r} is in the task catalogue but not fetched; run: geneb tasks fetch "
                f"{name}{copy}")  # fmt: skip
    return f". {name!r} is in the task catalogue but cannot be fetched ({why}){copy}"


@dataclass(frozen=True)
class TaskSummary:
    """One line of ``geneb tasks list``: the spec and split sizes, or why the folder is broken."""

    spec: TaskSpec | None
    name: str
    sizes: dict[str, int | None]
    error: str | None = None


def _folder_summary(name: str, folder: Path) -> TaskSummary:
    """From task.json when it has name-independent counts, else by loading the folder (or
    the GENEB task file)."""
    if folder.is_file():
        task = load_geneb_csv(folder)
        return TaskSummary(task.spec, task.name, {s: len(d) for s, d in task.splits.items()})
    meta = read_task_json(folder)
    if "n_classes" in meta and "n_train" in meta and "n_test" in meta:
        k = int(meta["n_classes"])
        names = meta.get("label_names") or [str(i) for i in range(k)]
        task_name = check_task_name(meta.get("name", folder.name), str(folder / TASK_JSON))
        splits = tuple(s for s in SPLIT_ORDER if s != "valid" or split_sources(folder, s))
        spec = TaskSpec(
            name=task_name,
            category=meta.get("category", UNCATEGORIZED),
            n_classes=k,
            label_names=tuple(names),
            source=meta.get("source", ""),
            license=meta.get("license", ""),
            splits=splits,
            synthetic=bool(meta.get("synthetic", False)),
            path=str(folder.resolve()),
            description=meta.get("description", ""),
        )
        sizes = {s: meta.get(f"n_{s}") for s in splits}
        return TaskSummary(spec, task_name, sizes)
    task = load_task_folder(folder)
    return TaskSummary(task.spec, task.name, {s: len(d) for s, d in task.splits.items()})


def task_summaries(
    data_dir: str | os.PathLike[str] | None = None, *, strict: bool = False
) -> list[TaskSummary]:
    """Built-in tasks, then every task folder under the data dir, then fetched tasks.

    A folder's summary comes from its task.json when that gives n_classes, n_train and n_test
    (cheap; the data are validated when the task is loaded), else from loading it. A broken
    folder raises with ``strict``, else it is returned with its error so a listing goes on.
    """
    out = [
        TaskSummary(synthetic_spec(n), n, {"train": DEFAULT_N_TRAIN, "test": DEFAULT_N_TEST})
        for n in SYNTHETIC_TASK_NAMES
    ]
    folders = task_folders(data_dir)
    files = {n: p for n, p in task_files(data_dir).items() if n not in folders}
    fetched = {n: p for n, p in fetched_folders().items() if n not in folders and n not in files}
    for name, folder in [*folders.items(), *files.items(), *fetched.items()]:
        try:
            out.append(_folder_summary(name, folder))
        except GenebError as e:
            if strict:
                raise
            out.append(TaskSummary(None, name, {}, str(e)))
    return out


def list_tasks(data_dir: str | None = None) -> list[TaskSpec]:
    """Specs of the built-in tasks and of every task folder under the data dir (broken: raise)."""
    return [s.spec for s in task_summaries(data_dir, strict=True) if s.spec is not None]
