"""The command group and what every command shares: messages, tables, warnings.

A failure other than a bad option value is one line on standard error
(:class:`CLIError`, status 2). Third-party deprecation warnings that a user
cannot act on (:data:`QUIET_WARNINGS`) are not shown, in this process or in
the harness's worker processes.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from bolt_pco64.instances import DEFAULT_INSTANCE, INSTANCES, Instance, get_instance

__all__ = ["QUIET_WARNINGS", "CLIError", "main"]

#: ``(message prefix, category)`` of the third-party warnings the commands
#: hide: the deprecation raised while GPyTorch's ``linear_operator`` is
#: imported, and its note that a GP fit added jitter to a covariance matrix
#: (a ``NumericalWarning``, a ``RuntimeWarning``), printed once per fit.
QUIET_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    ("`torch.jit.script` is deprecated", FutureWarning),
    ("`torch.jit.script` is deprecated", DeprecationWarning),
    ("A not p.d", RuntimeWarning),
)


@contextlib.contextmanager
def _quiet_third_party() -> Iterator[None]:
    """Hide :data:`QUIET_WARNINGS` here and in child processes, then restore.

    Child Python processes (the ``--jobs`` workers) get the filters through
    ``sys.warnoptions``, which :mod:`multiprocessing` passes on as ``-W``
    options after any ``-W`` the user gave, so that they win over a blanket
    ``-W default``. (Not through ``PYTHONWARNINGS``: Python drops a ``-W``
    option that repeats one of it, which would let ``-W default`` win.)
    """
    options = [f"ignore:{msg}:{cat.__name__}" for msg, cat in QUIET_WARNINGS]
    before = list(sys.warnoptions)
    sys.warnoptions.extend(options)
    try:
        with warnings.catch_warnings():
            for msg, cat in QUIET_WARNINGS:
                warnings.filterwarnings("ignore", message=re.escape(msg), category=cat)
            yield
    finally:
        sys.warnoptions[:] = before


class CLIError(click.ClickException):
    """A one-line error that exits with status 2."""

    exit_code = 2


#: Stands for a hyphen while help text is wrapped, so that no line breaks
#: inside a hyphenated word (``qlognei-box``, ``bench-results/quick-all``).
_NO_BREAK_HYPHEN = "\u2011"


class _HelpFormatter(click.HelpFormatter):
    """Click's help layout, but lines break only between words: never at a
    hyphen inside a name or a path."""

    def _unbroken(self, write: Any, *args: Any) -> None:
        start = len(self.buffer)
        write(*args)
        self.buffer[start:] = [
            part.replace(_NO_BREAK_HYPHEN, "-") for part in self.buffer[start:]
        ]

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(a, b.replace("-", _NO_BREAK_HYPHEN)) for a, b in rows]
        self._unbroken(super().write_dl, rows, col_max, col_spacing)

    def write_text(self, text: str) -> None:
        self._unbroken(super().write_text, text.replace("-", _NO_BREAK_HYPHEN))


class _Context(click.Context):
    formatter_class = _HelpFormatter


class _Command(click.Command):
    context_class = _Context


class _Main(click.Group):
    """The command group; every invocation runs with third-party warnings hidden."""

    context_class = _Context
    command_class = _Command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with _quiet_third_party():
            return super().main(*args, **kwargs)


def _one_line(err: BaseException, origin: str | None = None) -> CLIError:
    text = " ".join(str(err).split())
    return CLIError(f"{origin}: {text}" if origin else text)


def _table_origin(table_path: Path | None, instance: Instance) -> str | None:
    """What named the table: ``--table``, the environment variable, or nothing."""
    if table_path is not None:
        return "--table"
    return instance.env_table if os.environ.get(instance.env_table) else None


def _load(table_path: Path | None, problem: str | Instance = DEFAULT_INSTANCE) -> Any:
    """``problem``'s table, or a one-line :class:`CLIError` naming its origin.

    The stand-in's and the reconstruction's Python warnings are not shown: the
    commands say it in words (``table.source`` carries the label).
    """
    from bolt_pco64.tables.table import (
        ReconstructedTableWarning,
        SimulatedTableWarning,
        TableError,
        load_table,
    )

    instance = get_instance(problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            warnings.simplefilter("ignore", ReconstructedTableWarning)
            return load_table(table_path, instance=instance)
    except (TableError, OSError, ValueError) as err:
        raise _one_line(err, _table_origin(table_path, instance)) from err


_PROBLEM_NAMES = sorted(INSTANCES)


def _problem_option(allow_all: bool = False) -> Any:
    names = [*_PROBLEM_NAMES, "all"] if allow_all else _PROBLEM_NAMES
    return click.option(
        "--problem",
        type=click.Choice(names),
        default=DEFAULT_INSTANCE,
        show_default=True,
        help="The instance"
        + (" ('all': each one, with a combined summary)." if allow_all else "."),
    )


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bolt_pco64")
def main() -> None:
    """pco16, pco32, pco64: LLM-training throughput on 16, 32 and 64 GPUs by
    parallelism configuration, as BoTorch test problems with out-of-memory
    crashes."""


_TABLE_TYPE = click.Path(dir_okay=False, path_type=Path)
