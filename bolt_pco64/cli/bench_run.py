"""How ``bench`` runs its comparison and reports on the terminal.

:class:`Runner` runs ``bench``'s one
:class:`~bolt_pco64.bench.spec.ComparisonSpec` through
:func:`~bolt_pco64.bench.comparison.run_comparison`; a refused setting is one
line led by its option (:func:`option_error`), a folder whose runs were made
with another lane setting one line naming both and the flag that resumes it.
:func:`bench_one`, :func:`bench_all` and :func:`bench_variants` run one
table, the family or the stand-in variants and print their terminal
summary (its lines: :mod:`bolt_pco64.cli.bench_lines`); :func:`resume_hint`
says on Ctrl-C how to resume.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from bolt_pco64.bench.spec import seeds_text
from bolt_pco64.cli._core import (
    _PROBLEM_NAMES,
    CLIError,
    _load,
    _one_line,
    _table_origin,
)
from bolt_pco64.cli.bench_lines import (
    failure_lines,
    other_methods_line,
    seeds_line,
    shown_budget,
    smoke_family_line,
    snap_lines,
    table_line,
    table_lines,
    verdict_lines,
)

__all__ = [
    "Runner",
    "bench_all",
    "bench_one",
    "bench_variants",
    "make_spec",
    "option_error",
    "resume_hint",
]


class Runner:
    """Runs ``bench``'s one spec on a table set through
    :func:`~bolt_pco64.bench.comparison.run_comparison`, its errors as one line.

    Attributes:
        lane_width: Seeds per lane (:mod:`bolt_pco64.bench.lanes`), ``None``
            for one run at a time.
    """

    def __init__(
        self,
        spec: Any,
        args: dict[str, Any],
        out: Path,
        jobs: int,
        dask_scheduler: str | None,
        progress: bool,
        lane_width: int | None,
    ) -> None:
        self.spec = spec
        self.args = args
        self.out = out
        self.jobs = jobs
        self.dask_scheduler = dask_scheduler
        self.progress = progress
        self.lane_width = lane_width

    def __call__(self, tables: Any) -> Any:
        from bolt_pco64.bench.comparison import run_comparison
        from bolt_pco64.bench.spec import ComparisonSpecError
        from bolt_pco64.bench.store import LaneSettingError
        from bolt_pco64.tables.table import TableError

        try:
            return run_comparison(
                self.spec,
                tables,
                out=self.out,
                jobs=self.jobs,
                dask_scheduler=self.dask_scheduler,
                progress=self.progress,
                arguments=self.args,
                lane_width=self.lane_width,
            )
        except ComparisonSpecError as err:
            raise option_error(err) from err
        except LaneSettingError as err:
            raise CLIError(f"--lane-width: {_lower(err.message(cli=True))}") from err
        except (TableError, ValueError, OSError) as err:
            raise _one_line(err) from err


def make_spec(preset: Any, **settings: Any) -> Any:
    """The comparison's :class:`~bolt_pco64.bench.spec.ComparisonSpec`: the
    preset's values replaced by the options given, checked once; a refused
    setting is a one-line error led by its option (:func:`option_error`)."""
    from bolt_pco64.bench.spec import ComparisonSpecError

    try:
        return preset.spec(**settings)
    except ComparisonSpecError as err:
        raise option_error(err) from err


#: The command-line option of each setting that the spec's checks name.
_OPTIONS = {
    "n_init": "--n-init",
    "budget_hours": "--budget-hours",
    "budget": "--budget",
    "q": "--q",
    "noise": "--noise",
    "workers": "--workers",
    "seeds": "--seeds",
    "reference": "--reference",
    "early_stop": "--early-stop",
}


def _lower(text: str) -> str:
    """``"Expected ..."`` as it reads after an option: ``"expected ..."``."""
    return "e" + text[1:] if text.startswith("Expected") else text


def option_error(err: ValueError) -> CLIError:
    """``err`` in one line with setting names replaced by option names
    (``n_init`` -> ``--n-init``), led by the first option it names."""
    options = {**_OPTIONS, **{o[2:]: o for o in _OPTIONS.values()}}
    pattern = re.compile(
        rf"(?<![\w-])(?:--)?({'|'.join(re.escape(n) for n in options)})(?![\w-])"
    )
    text = " ".join(str(err).split())
    first = pattern.search(text)
    if first is None:
        return _one_line(err)
    text = _lower(pattern.sub(lambda m: options[m.group(1)], text))
    return CLIError(f"{options[first.group(1)]}: {text}")


@contextlib.contextmanager
def resume_hint(out: Path) -> Iterator[None]:
    """On Ctrl-C: say what is kept and the command that resumes, then exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        ctx = click.get_current_context()
        click.echo(
            f"\nInterrupted. The finished runs are kept in {out}; the runs in "
            "progress are not. To resume, rerun the same command with the same "
            f"--out:\n  {_rerun_command(ctx, out)}",
            err=True,
        )
        ctx.exit(130)


def _option_text(name: str, value: Any) -> str:
    """An option's value as the command line takes it back."""
    if name == "instance":
        return str(getattr(value, "path", None) or value.name)
    if name == "seeds" and isinstance(value, tuple):
        return seeds_text(value)
    if value is None:
        return "none"
    return ",".join(value) if isinstance(value, list) else str(value)


def _rerun_command(ctx: click.Context, out: Path) -> str:
    """The command line that resumes this run: the options given, and --out."""
    words = ["bolt-pco64", ctx.info_name or "bench"]
    for param in ctx.command.params:
        name = param.name or ""
        given = ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        if not given or name == "out" or not isinstance(param, click.Option):
            continue
        flag = max(param.opts, key=len)
        if param.is_flag:
            words.append(flag)
        else:
            words += [flag, _option_text(name, ctx.params[name])]
    return shlex.join([*words, "--out", str(out)])


def _check_run_times(table: Any, table_path: Path | None) -> None:
    """A one-line :class:`CLIError` naming the table's origin if the time
    model cannot charge its runs (:class:`~bolt_pco64.tables.time_model.TimeModel`)."""
    from bolt_pco64.tables.time_model import TimeModel

    try:
        TimeModel(table)
    except ValueError as err:
        origin = _table_origin(table_path, table.instance) or "table"
        raise _one_line(err, f"{origin} (run times)") from err


def _standin(standin: str, problem: str) -> Any:
    """The stand-in variant's table (the simulated-data warning once)."""
    from bolt_pco64.tables.standins import STANDIN_PREFIX
    from bolt_pco64.tables.table import load_table

    return load_table(STANDIN_PREFIX + standin, instance=problem)


def bench_one(
    run: Runner,
    problem: str,
    instance: Any,
    standin: str | None,
    table_path: Path | None,
) -> None:
    """``bench`` on one table: run it, then the terminal summary."""
    table = (
        _load(table_path, problem if instance is None else instance)
        if standin is None
        else _standin(standin, problem)
    )
    _check_run_times(table, table_path)
    t0 = time.perf_counter()
    result = run(table)
    from bolt_pco64.bench.report.markdown import terminal_summary

    resumed = len(result.summary) and (
        int(result.summary["runs"].sum() + result.summary["failed"].sum())
        - len(result.ran)
    )
    methods = list(result.summary["method"])
    lines = [
        table_line(result.table),
        seeds_line(run.spec.seeds, result.records),
        other_methods_line(result.summary, list(run.spec.methods)),
        terminal_summary(result.summary, shown_budget(run.args["budget"], result)),
        *snap_lines(result.records),
        "",
        *verdict_lines(result.out, str(run.spec.reference), methods, result.summary),
        *failure_lines(result.errors, "meta.json"),
        "",
        f"{len(result.ran)} run(s) done, {resumed} resumed from {result.out}, "
        f"in {time.perf_counter() - t0:.0f} s.",
        f"full tables: {result.out / 'summary.md'}",
        f"plot: {result.plot}",
        f"cost report: {result.out / 'cost_summary.md'}",
    ]
    if table.is_simulated:
        lines += textwrap.wrap(
            "NOTE: these results are on the SIMULATED stand-in table, not measured "
            "data (`bolt-pco64 fetch` installs the measured one).",
            80,
        )
    click.echo("\n".join(line for line in lines if line is not None))


def bench_variants(run: Runner, problem: str) -> None:
    """``bench --standin all``: every variant, then the robustness report."""
    from bolt_pco64.bench.variants import StandinVariants
    from bolt_pco64.tables.table import SimulatedTableWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        result = run(StandinVariants(problem))
    lines = [
        *table_lines(result.results),
        f"seeds: {seeds_text(run.spec.seeds)}",
        result.markdown.rstrip(),
        *failure_lines(result.errors, "each meta.json"),
        "",
        f"done in {time.perf_counter() - t0:.0f} s; each variant's results in "
        f"{result.out}/<variant>/; robustness: {result.out}/robustness.md.",
        "NOTE: every variant is a SIMULATED stand-in table, not measured data.",
    ]
    click.echo("\n".join(lines))


def bench_all(run: Runner) -> None:
    """``bench --problem all``: every instance, then the combined summary."""
    from bolt_pco64.bench.family import Family
    from bolt_pco64.tables.table import SimulatedTableWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        result = run(Family(_PROBLEM_NAMES))
    from bolt_pco64.bench.report.markdown import terminal_summary

    lines = [
        *table_lines(result.results),
        f"seeds: {seeds_text(run.spec.seeds)}",
        terminal_summary(result.summary, run.spec.budget, first_column="problem"),
        *smoke_family_line(result.results),
        *failure_lines(result.errors, "each meta.json"),
        "",
        f"{len(result.ran)} run(s) done in {time.perf_counter() - t0:.0f} s; "
        f"each problem's results in {result.out}/<problem>/.",
        f"full tables: {result.out / 'summary.md'} (paired comparisons with "
        f"{run.spec.reference}: {result.out}/<problem>/summary.md)",
        f"plot: {result.plot}",
        f"cost report: {result.out / 'cost_summary.md'}",
    ]
    simulated = [
        p
        for p, r in result.results.items()
        if r.table is not None and r.table.is_simulated
    ]
    if simulated:
        lines += textwrap.wrap(
            f"NOTE: the results on {', '.join(simulated)} are on SIMULATED stand-in "
            "tables, not measured data.",
            80,
        )
    click.echo("\n".join(lines))
