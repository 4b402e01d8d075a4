"""GENEB's task files: one CSV per task, read as GENEB's pipeline reads it.

The format (darlednik/GENEB ``embedding_pipeline/main.py``, ``load_csv_dataset``; its README
and CONTRIBUTING): a file ``<GENEB task id>.csv`` with columns ``text`` (the sequence),
``label`` and ``split`` (``train`` or ``test``); a folder of such files is a *collection*
(GENEB's ``GENEB_data/``), one task per file. GENEB takes the train rows and the test rows in
file order, and its k-shot draws index the train rows by their position among them.

Here a task file loads as a :class:`~geneb.tasks.spec.Task` named by its stem (GENEB's id)
with every check a task folder gets (:func:`geneb.tasks.loader.assemble_task`); errors name
the file and its data row (``x.csv row 7 (line 8)``, the header not counted). What differs
from a task folder, and why:

- ``split`` must be ``train`` or ``test`` in every row: GENEB's pipeline silently drops any
  other row (a typo such as ``Train`` would drop it), so here such a row is refused, named.
- Integer labels may be any integers (GENEB's sources use e.g. 0/1 or other codes): class ids
  follow ascending numeric order, which is ``np.unique``'s order, the class order of GENEB's
  probe code; string labels get ids in sorted order, as in a task folder. So class id ``k``
  is GENEB's ``k``-th class, ``spec.label_names[k]`` its label as written in the file, and
  ``metadata["label_mapping"]`` the label -> id map.
- ``SplitData.rows`` of a split are positions among that split's rows of the file (train row
  ``i`` is GENEB's ``train[i]``); ``metadata["file_rows"]`` gives each split's 0-based data
  rows of the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.errors import TaskError
from geneb.protocol import TRAIN_ROW_CAP
from geneb.tasks.loader import assemble_task, check_task_name
from geneb.tasks.readers import RawSplit, read_csv_frame
from geneb.tasks.spec import Task
from geneb.tasks.validate import Locator

#: GENEB's task-file columns, and the split values its pipeline uses
GENEB_COLUMNS = ("text", "label", "split")
GENEB_SPLITS = ("train", "test")


def is_geneb_csv(path: Path) -> bool:
    """A ``.csv`` file whose header holds GENEB's columns (only the first line is read)."""
    if not (path.is_file() and path.suffix == ".csv" and not path.name.startswith(".")):
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            header = f.readline()
    except OSError:
        return False
    names = {c.strip().strip('"').lstrip("\ufeff") for c in header.strip().split(",")}
    return set(GENEB_COLUMNS) <= names


def collection_files(folder: Path) -> dict[str, Path]:
    """The GENEB task files directly in ``folder``, by task id (file stem), sorted."""
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.csv")) if is_geneb_csv(p)}


def _read(path: Path) -> pd.DataFrame:
    df = read_csv_frame(path, ",".join(GENEB_COLUMNS))
    missing = [c for c in GENEB_COLUMNS if c not in df.columns]
    if missing:
        found = ", ".join(repr(c) for c in df.columns) or "(none)"
        raise TaskError(
            f"{path}: missing column(s) {', '.join(map(repr, missing))}; a GENEB task file has "
            f"columns 'text', 'label' and 'split' (train/test), found: {found}"
        )
    return df


def _file_rows(file: str, pos: list[int]) -> Locator:
    """Row ``i`` of a split, named by its data row (and line) in the file."""
    return lambda i: f"{file} row {pos[i] + 1} (line {pos[i] + 2})"


def read_geneb_splits(path: Path) -> tuple[list[RawSplit], dict[str, list[int]]]:
    """The train and test splits of a GENEB task file, raw, in file order, and each split's
    0-based data rows of the file."""
    df = _read(path)
    file = str(path)
    split = df["split"].to_numpy(dtype=object)
    bad = np.flatnonzero(~np.isin(split, GENEB_SPLITS))
    if bad.size:
        i = int(bad[0])
        also = f" ({bad.size} rows have this problem)" if bad.size > 1 else ""
        raise TaskError(
            f"{file} row {i + 1} (line {i + 2}): split must be 'train' or 'test' (GENEB's task "
            f"file format), got {split[i]!r}{also}"
        )
    ignored = tuple(c for c in df.columns if c not in GENEB_COLUMNS)
    raws, rows = [], {}
    for name in GENEB_SPLITS:
        at = np.flatnonzero(split == name)
        if not at.size:
            raise TaskError(f"{file}: no row has split {name!r}; a GENEB task file needs "
                            f"train and test rows")  # fmt: skip
        pos = at.tolist()
        raws.append(RawSplit(name, file, "geneb-csv", df["text"].iloc[at].tolist(),
                             df["label"].iloc[at].to_numpy(dtype=object),
                             _file_rows(file, pos), ignored))  # fmt: skip
        rows[name] = pos
    return raws, rows


def load_geneb_csv(
    path: str | os.PathLike[str], *, train_row_cap: int | None = TRAIN_ROW_CAP
) -> Task:
    """Load one GENEB task file as a task named by its stem (see the module docstring).

    Known GENEB ids get GENEB's category and record the catalogue entry they are
    (``metadata["catalogue_name"]``); other stems load uncategorised.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise TaskError(f"{file}: GENEB task file not found")
    file = file.resolve()
    name = check_task_name(file.stem, str(file))
    from geneb.tasks.aliases import catalogue_name_for
    from geneb.tasks.geneb_list import geneb_tasks

    known = {t.id: t for t in geneb_tasks()}
    meta: dict[str, Any] = {"name": name, "source": f"GENEB task file {file.name}"}
    if name in known:
        meta.update(category=known[name].category, description=known[name].label)
    raws, rows = read_geneb_splits(file)
    extra = {"task_json": None, "format": "geneb-csv", "file_rows": rows,
             "geneb_id": name if name in known else None,
             "catalogue_name": catalogue_name_for(name)}  # fmt: skip
    return assemble_task(file, name, raws, meta, str(file), [], train_row_cap,
                         any_int_labels=True, extra_metadata=extra)  # fmt: skip
