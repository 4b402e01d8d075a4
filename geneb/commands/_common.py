"""Shared CLI plumbing: clean errors (no traceback), plain-text consoles, quiet-in-CI progress.

Everything the CLI prints is plain text. Labels, model names, paths and sequences come from the
user, and Rich markup would read ``AC[bold]GT`` as a style tag (shown as ``ACGT``) or fail on a
label ``[/red]`` with a ``MarkupError`` traceback; so the consoles are built with markup, emoji
and highlighting off, and errors go through ``typer.echo``.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

import typer

from geneb.errors import GenebError

if TYPE_CHECKING:
    from rich.console import Console

P = ParamSpec("P")
R = TypeVar("R")

#: Options every console of the CLI is built with: user data is never read as markup.
PLAIN: dict[str, Any] = {"markup": False, "emoji": False, "highlight": False}

#: OS errors about the place being written (not about geneb's input) and how they are named.
#: Each becomes ``error: <what>: <path>`` (exit 2), whatever command hit it.
DISK_ERRORS: dict[int, str] = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


class _LazyConsole:
    """A rich ``Console`` made on first use: importing rich costs ~20 ms, and commands that
    print plain lines (``geneb probe``) should not pay it at start-up."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = {**PLAIN, **kwargs}
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return getattr(self._console, name)


console: Any = _LazyConsole()
err_console: Any = _LazyConsole(stderr=True)


def wide_console(min_width: int) -> Any:
    """The console for a table: the terminal one, or a plain one at least ``min_width`` wide
    when piped (names and sizes must stay whole in a file)."""
    if console.is_terminal:
        return console
    from rich.console import Console

    return Console(width=max(console.width, min_width), **PLAIN)


def disk_error_message(e: OSError) -> str | None:
    """``'no space left on device: <path>'`` for an OSError about the output, else None.

    Libraries (pyarrow, zarr, numcodecs) sometimes raise an ``OSError`` without ``errno`` whose
    text carries the reason; those are recognised by the C library's wording.
    """
    what = DISK_ERRORS.get(e.errno) if e.errno is not None else None
    if what is None:
        text = str(e)
        for code, name in DISK_ERRORS.items():
            if code in (errno.EACCES, errno.EPERM):
                continue  # too generic to recognise from text alone
            if os.strerror(code).lower() in text.lower():
                what = name
                break
    if what is None:
        return None
    path = e.filename if e.filename is not None else None
    if path is None:
        return f"{what} ({e})" if str(e) else what
    return f"{what}: {os.fsdecode(path)}"


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, as plain text."""
    typer.echo(f"error: {message}", err=True)


#: ``name=value`` in a library message: a parameter mentioned with the value to give it.
_MENTION = re.compile(r"(?<![\w.-])([A-Za-z_]\w*)=(True|False|'[^']*'|\"[^\"]*\"|[^\s,;:()]+)")
#: ``(name)`` in a library message: a parameter named in passing.
_NAMED = re.compile(r"\(([A-Za-z_]\w*)\)")


def command_options(fn: Callable[..., Any]) -> dict[str, tuple[str, bool]]:
    """A command function's options by Python name: (flag, is a bool flag), read from its
    ``Annotated[..., typer.Option("--flag", ...)]`` declarations (what Typer builds from)."""
    import typing

    from typer.models import OptionInfo

    out: dict[str, tuple[str, bool]] = {}
    for name, hint in typing.get_type_hints(fn, include_extras=True).items():
        for meta in getattr(hint, "__metadata__", ()):
            if isinstance(meta, OptionInfo):
                # in Annotated, typer.Option("--flag", ...) puts the first flag in ``default``
                decls = [d for d in (meta.default, *(meta.param_decls or ()))
                         if isinstance(d, str) and d.startswith("-")]
                flag = next((d for d in decls if d.startswith("--")),
                            decls[0] if decls else "--" + name.replace("_", "-"))
                out[name] = (flag, typing.get_args(hint)[0] is bool)
    return out


def flag_message(
    e: GenebError | str,
    options: Mapping[str, tuple[str, bool]],
    aliases: Mapping[str, str] | None = None,
) -> str:
    """The message of a library error as the command's user reads it: library errors name
    Python parameters, and the CLI names its options.

    The contract: an error about one parameter carries ``param`` and its message starts with
    that name (``batch_tokens: expected ...``, ``shots[0]: ...``); that leading name becomes
    the option's flag (``--batch-tokens: expected ...``). A parameter mentioned as
    ``name=value`` anywhere in a message (a hint: ``pass take_all=True``) becomes
    ``--take-all`` / ``--name value``, and one named in parentheses (``(batch_tokens)``) its
    flag. Only names the command has as options are translated (``options``: its
    :func:`command_options`; a warning line is translated as an error without ``param``);
    ``aliases`` maps a library name to the option's Python name where
    they differ (``{"Cs": "C"}``).
    """
    msg = str(e)
    aliases = aliases or {}

    def option(name: str) -> tuple[str, bool] | None:
        return options.get(aliases.get(name, name))

    param = getattr(e, "param", None)
    lead = option(param) if param else None
    if param and lead is not None:
        m = re.match(re.escape(param) + r"(\[\d+\])?(?=[:\s]|$)", msg)
        if m:
            msg = lead[0] + msg[m.end():]

    def mention(m: re.Match[str]) -> str:
        opt, value = option(m.group(1)), m.group(2)
        if opt is None or (opt[1] and value != "True"):
            return m.group(0)
        return opt[0] if opt[1] else f"{opt[0]} {value}"

    def named(m: re.Match[str]) -> str:
        opt = option(m.group(1))
        return m.group(0) if opt is None else f"({opt[0]})"

    return _NAMED.sub(named, _MENTION.sub(mention, msg))


@overload
def cli_errors(fn: Callable[P, R]) -> Callable[P, R]: ...
@overload
def cli_errors(
    *, aliases: Mapping[str, str]
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...
def cli_errors(fn: Any = None, *, aliases: Mapping[str, str] | None = None) -> Any:
    """Turn a ``GenebError``, or an OS error about the output (disk full, quota, read-only,
    permission), into ``error: <message>`` on stderr and exit code 2, without a traceback.

    Library errors name parameters; the message printed names this command's options
    (:func:`flag_message`; ``aliases``: library parameter -> option Python name)."""
    if fn is None:
        return lambda f: _translated(f, aliases)
    return _translated(fn, aliases)


def _translated(fn: Callable[P, R], aliases: Mapping[str, str] | None) -> Callable[P, R]:
    """``fn`` with its errors printed as :func:`cli_errors` says."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except GenebError as e:
            print_error(flag_message(e, command_options(fn), aliases))
            raise typer.Exit(2) from None
        except OSError as e:
            msg = disk_error_message(e)
            if msg is None:
                raise
            print_error(msg)
            raise typer.Exit(2) from None

    return wrapper


def show_progress() -> bool:
    """Progress bars only on an interactive terminal and never in CI."""
    if os.environ.get("CI") or os.environ.get("GENEB_NO_PROGRESS"):
        return False
    return sys.stderr.isatty()


# ---------------------------------------------------------------- the repeat rule
#: THE rule for repeated options, for every command (enforced by ``RepeatRuleGroup``): an
#: option declared with several values (a list: ``--model``, ``--task``, ``--C``, ``--shots``,
#: ``--probe``, ...) takes them repeated and, where it says so, comma-separated, and uses all
#: of them; an option that takes one value (or a flag) may be given once; given twice it is
#: refused naming both uses, never silently "the last one wins" (which
#: would make ``--probe linear --probe mlp`` run only the MLP).
REPEAT_RULE = (
    "options that take several values accept repeats; an option that takes one value may be "
    "given once"
)


def check_repeats(cmd: Any, args: list[str]) -> None:
    """Raise ``typer.BadParameter`` (a usage error: exit 2) when a single-valued option of
    ``cmd`` appears more than once in its raw ``args`` (``--opt v``, ``--opt=v``, a flag and
    its ``--no-`` form alike)."""
    names: dict[str, Any] = {}
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "option":
            for n in (*p.opts, *p.secondary_opts):
                names[n] = p
    used: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            break
        name, eq, _ = token.partition("=")
        p = names.get(name)
        i += 1
        if p is None:
            continue
        takes = 0 if (p.is_flag or p.count or eq) else max(1, p.nargs)
        shown = " ".join([token, *args[i:i + takes]])
        i += takes
        if not p.multiple:
            used.setdefault(p.name or name, []).append(shown)
    for uses in used.values():
        if len(uses) > 1:
            opt = uses[0].split()[0].partition("=")[0]
            raise typer.BadParameter(
                f"given {len(uses)} times ({', '.join(repr(u) for u in uses)}); it takes one "
                "value, so give it once", param_hint=repr(opt))


def repeat_rule_group() -> type:
    """The ``TyperGroup`` every group of the ``geneb`` command is built with: it applies
    ``check_repeats`` to the command it dispatches to (sub-groups apply it in turn)."""
    from typer.core import TyperGroup

    class RepeatRuleGroup(TyperGroup):
        def resolve_command(self, ctx: Any, args: list[str]) -> Any:
            name, cmd, rest = super().resolve_command(ctx, args)
            if cmd is not None and not isinstance(cmd, TyperGroup):
                check_repeats(cmd, rest)
            return name, cmd, rest

    return RepeatRuleGroup
