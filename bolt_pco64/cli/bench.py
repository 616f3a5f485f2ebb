"""The ``bench`` command: the harness on one problem, on all, or on every stand-in.

Everything is checked before anything is written: a bad option is a usage
error naming it. The options become one
:class:`~bolt_pco64.bench.spec.ComparisonSpec`, which checks the settings once,
run by :func:`~bolt_pco64.bench.comparison.run_comparison` on one table, the family or
the stand-in variants; a refused setting is one line led by its option
(``_option_error``).
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

from bolt_pco64.bench.spec import (
    DEFAULT_REFERENCE,
    DEFAULTS,
    EARLY_STOP_CHOICES,
    QUICK,
    QUICK_FAMILY,
    BenchConfig,
)
from bolt_pco64.cli._core import (
    _PROBLEM_NAMES,
    _TABLE_TYPE,
    CLIError,
    _load,
    _one_line,
    _problem_option,
    _table_origin,
    main,
)
from bolt_pco64.cli.params import (
    _BenchCommand,
    _InstanceFile,
    _Method,
    _Methods,
    _MethodsOption,
    _Noise,
)

__all__ = ["bench"]


@main.command(
    cls=_BenchCommand,
    short_help="Compare BO methods across seeds on a problem, or on all (resumable).",
)
@_problem_option(allow_all=True)
@click.option(
    "--methods",
    cls=_MethodsOption,
    type=_Methods(),
    default=None,
    help="Comma-separated method names, from the list below [default: "
    f"{', '.join(DEFAULTS.methods)}].",
)
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=None,
    help=f"Seeds per method [default: {DEFAULTS.seeds}].",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help=f"Evaluations per run, initial design included [default: {DEFAULTS.budget}].",
)
@click.option(
    "--budget-hours",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="GPU-hours per run (of the instance's cluster) instead of --budget: "
    "runs go on until they are spent, on a simulated clock.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=BenchConfig.workers,
    show_default=True,
    help="Runs in flight at once on the simulated clock, each on its own "
    "cluster; the method sees the others as pending.",
)
@click.option(
    "--early-stop",
    type=click.Choice(EARLY_STOP_CHOICES),
    default=BenchConfig.early_stop,
    show_default=True,
    help="Stop a run after a step when its estimate so far shows it will not "
    "beat the best: the runner's posterior rule, or Ax's percentile rule; a "
    "stopped run is charged the steps it ran.",
)
@click.option(
    "--n-init",
    type=click.IntRange(min=1),
    default=None,
    help=f"Initial design size [default: {BenchConfig.n_init}].",
)
@click.option(
    "--q",
    type=click.IntRange(min=1),
    default=BenchConfig.q,
    show_default=True,
    help="Batch size.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Output directory [default: {DEFAULTS.out}; with --quick {QUICK.out}; "
    f"with --quick --problem all {QUICK_FAMILY.out}].",
)
@click.option(
    "--quick",
    is_flag=True,
    help=f"{QUICK.describe()}; with --problem all, {QUICK_FAMILY.describe()} "
    "on each problem.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Local worker processes.",
)
@click.option(
    "--lane-width",
    type=click.IntRange(min=1),
    default=None,
    help="Run each method's seeds in lock-step lanes of this many, as one batched "
    "computation (bolt_pco64.bench.lanes; a seed's records are the same in any "
    "lane). Default: one run at a time. --jobs and Dask split the work by "
    "method x lane.",
)
@click.option(
    "--dask-scheduler", default=None, help="Address of a running Dask scheduler."
)
@click.option(
    "--table",
    "table_path",
    type=_TABLE_TYPE,
    default=None,
    help="Benchmark on this table file instead of the default.",
)
@click.option(
    "--instance",
    "instance",
    type=_InstanceFile(),
    default=None,
    help="Benchmark a user's own instance described in this TOML file "
    "(bolt_pco64.instance_file), instead of --problem; with --table.",
)
@click.option(
    "--standin",
    default=None,
    help="Run on this stand-in variant (bolt_pco64.tables.standins.STANDIN_VARIANTS), or "
    "'all': on every variant into OUT/<variant>/, then OUT/robustness.md.",
)
@click.option(
    "--noise",
    type=_Noise(),
    default=None,
    help="Observation noise: 'measured' or a standard deviation (default: none).",
)
@click.option(
    "--reference",
    type=_Method(),
    default=None,
    help="Method every other one is compared with, seed by seed, in the summary; "
    f"one of the compared methods [default: {DEFAULT_REFERENCE}, or the first "
    f"method when {DEFAULT_REFERENCE} is not compared].",
)
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def bench(
    problem: str,
    methods: list[str] | None,
    seeds: int | None,
    budget: int | None,
    budget_hours: float | None,
    workers: int,
    early_stop: str,
    n_init: int | None,
    q: int,
    out: Path | None,
    quick: bool,
    jobs: int,
    lane_width: int | None,
    dask_scheduler: str | None,
    table_path: Path | None,
    instance: Any,
    standin: str | None,
    noise: float | str | None,
    reference: str | None,
    no_progress: bool,
) -> None:
    """Compare BO methods on a problem, or on all; resumable (see
    bolt_pco64.bench).

    Everything is checked before anything is written: a refused run leaves
    the file system as it was. With --problem all, OUT/<problem>/ holds each
    problem's results and OUT/summary.md and OUT/regret.png the combined ones.
    A rerun of the same command resumes: finished runs are kept. A folder
    holding runs of other methods is summarised with all of them.
    """
    _check_combinations(problem, table_path, instance, standin)
    preset = (QUICK_FAMILY if problem == "all" else QUICK) if quick else DEFAULTS
    out_dir = out if out is not None else Path(preset.out)
    spec = _spec(
        preset,
        methods=methods,
        seeds=seeds,
        budget=budget,
        budget_hours=budget_hours,
        n_init=n_init,
        q=q,
        noise=noise,
        workers=workers,
        early_stop=early_stop,
        reference=reference,
    )
    args: dict[str, Any] = {
        "methods": list(spec.methods),
        "seeds": seeds if seeds is not None else preset.seeds,
        "budget": spec.budget,
        "budget_hours": spec.budget_hours,
        "workers": spec.workers,
        "early_stop": spec.early_stop,
        "n_init": spec.n_init,
        "q": spec.q,
        "out": str(out_dir),
        "quick": quick,
        "jobs": jobs,
        "lane_width": lane_width,
        "dask_scheduler": dask_scheduler,
        "table": None if table_path is None else str(table_path),
        "noise": spec.noise,
        "problem": problem if instance is None else instance.name,
        "reference": spec.reference,
    }
    if standin is not None:
        args["standin"] = standin
    run = _Runner(spec, args, out_dir, jobs, dask_scheduler, not no_progress)
    run.lane_width = lane_width
    with _resume_hint(out_dir):
        if problem == "all":
            _bench_all(run)
        elif standin == "all":
            _bench_variants(run, problem)
        else:
            _bench_one(run, problem, instance, standin, table_path)


def _check_combinations(
    problem: str, table_path: Path | None, instance: Any, standin: str | None
) -> None:
    """Options that cannot go together (the spec checks the settings)."""
    if problem == "all" and table_path is not None:
        raise click.BadParameter(
            "expected one --problem for a table file, got --problem all",
            param_hint="'--table'",
        )
    if instance is not None and (problem == "all" or standin is not None):
        raise click.BadParameter(
            "expected no --problem all and no --standin with an instance file",
            param_hint="'--instance'",
        )
    if standin is not None:
        _check_standin(standin, problem, table_path)


@contextlib.contextmanager
def _resume_hint(out: Path) -> Iterator[None]:
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


def _rerun_command(ctx: click.Context, out: Path) -> str:
    """The command line that resumes this run: the options given, and --out."""
    words = ["bolt-pco64", ctx.info_name or "bench"]
    for param in ctx.command.params:
        name = param.name or ""
        given = ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        if not given or name == "out" or not isinstance(param, click.Option):
            continue
        value = ctx.params[name]
        flag = max(param.opts, key=len)
        if param.is_flag:
            words.append(flag)
        elif name == "instance":
            words += [flag, str(getattr(value, "path", None) or value.name)]
        else:
            text = ",".join(value) if isinstance(value, list) else str(value)
            words += [flag, text]
    return shlex.join([*words, "--out", str(out)])


def _bench_one(
    run: _Runner,
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
    lines = [
        table_line(result.table),
        _other_methods_line(result.summary, list(run.spec.methods)),
        terminal_summary(result.summary, _shown_budget(run.args["budget"], result)),
        *_snap_lines(result.records),
        "",
        *_comparison_lines(
            result.out,
            str(run.spec.reference),
            list(result.summary["method"]),
            result.summary,
        ),
        *_failures(result.errors, "meta.json"),
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


def table_line(table: Any, label: str = "table") -> str:
    """``"table: pco64, reconstructed: .../pco64_reconstructed.parquet [...]
    (780 rows, 648 feasible)"``: what a result was computed on."""
    text = (
        f"{label}: {table.instance.name}, {table.source} "
        f"({len(table)} rows, {table.n_feasible} feasible)"
    )
    return textwrap.fill(
        text, 80, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def _snap_lines(records: Any) -> list[str]:
    """One line per method whose proposals were snapped to other rows: the
    points it evaluated, those moved and those moved far
    (:func:`~bolt_pco64.bench.report.tables.snap_counts`)."""
    from bolt_pco64.bench.report.tables import snap_counts
    from bolt_pco64.problem.counts import SnapCounts

    return [
        f"snaps of {r.method}: {SnapCounts(r.points, r.moved, r.far)}"
        for r in snap_counts(records).itertuples()
        if r.moved
    ]


def _other_methods_line(summary: Any, asked: list[str]) -> str | None:
    """A line naming the methods the summary holds besides those asked for
    (earlier runs in the same --out), or ``None``."""
    others = [m for m in summary["method"] if m not in asked]
    if not others:
        return None
    return (
        f"The output folder also holds runs of {', '.join(others)} (same settings): "
        "the summary compares them all."
    )


def _spec(preset: Any, **settings: Any) -> Any:
    """The comparison's :class:`~bolt_pco64.bench.spec.ComparisonSpec`: the
    preset's values replaced by the options given, checked once; a refused
    setting is a one-line error led by its option (:func:`_option_error`)."""
    from bolt_pco64.bench.spec import ComparisonSpecError

    try:
        return preset.spec(**settings)
    except ComparisonSpecError as err:
        raise _option_error(err) from err


class _Runner:
    """Runs ``bench``'s one spec on a table set through
    :func:`~bolt_pco64.bench.comparison.run_comparison`, its errors as one line."""

    def __init__(
        self,
        spec: Any,
        args: dict[str, Any],
        out: Path,
        jobs: int,
        dask_scheduler: str | None,
        progress: bool,
    ) -> None:
        self.spec = spec
        self.args = args
        self.out = out
        self.jobs = jobs
        self.dask_scheduler = dask_scheduler
        self.progress = progress
        #: Seeds per lane (:mod:`bolt_pco64.bench.lanes`), ``None`` for one run
        #: at a time.
        self.lane_width: int | None = None

    def __call__(self, tables: Any) -> Any:
        from bolt_pco64.bench.comparison import run_comparison
        from bolt_pco64.bench.spec import ComparisonSpecError
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
            raise _option_error(err) from err
        except (TableError, ValueError, OSError) as err:
            raise _one_line(err) from err


def _shown_budget(budget: int | None, result: Any) -> int:
    """The evaluations the summary reports: ``--budget``, or on a GPU-hour
    budget the fewest any complete run made
    (:func:`~bolt_pco64.bench.report.cost.base.evaluation_horizon`)."""
    if budget is not None:
        return budget
    from bolt_pco64.bench.contract import RunKey
    from bolt_pco64.bench.report.cost import evaluation_horizon

    return evaluation_horizon(result.records, RunKey.parse_all(result.errors))


def _check_run_times(table: Any, table_path: Path | None) -> None:
    """A one-line :class:`CLIError` naming the table's origin if the time
    model cannot charge its runs (:class:`~bolt_pco64.tables.time_model.TimeModel`)."""
    from bolt_pco64.tables.time_model import TimeModel

    try:
        TimeModel(table)
    except ValueError as err:
        origin = _table_origin(table_path, table.instance) or "table"
        raise _one_line(err, f"{origin} (run times)") from err


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


def _option_error(err: ValueError) -> CLIError:
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
    text = pattern.sub(lambda m: options[m.group(1)], text)
    if text.startswith("Expected"):
        text = "e" + text[1:]
    return CLIError(f"{options[first.group(1)]}: {text}")


def _comparison_lines(
    out: Path, reference: str, methods: list[str], summary: Any
) -> list[str]:
    """The paired comparisons' verdicts on the simple regret at the last
    checkpoint (``summary.md`` has every checkpoint), or why there are none."""
    import pandas as pd

    from bolt_pco64.bench.report.markdown import no_comparisons_reason

    try:
        comparisons = pd.read_csv(out / "comparisons.csv")
    except (pd.errors.EmptyDataError, FileNotFoundError):
        comparisons = pd.DataFrame()
    if comparisons.empty:
        return [no_comparisons_reason(reference, methods, summary)]
    regret = comparisons[comparisons["measure"] == "regret"]
    last = regret[regret["checkpoint"] == regret["checkpoint"].max()]
    return [
        f"Paired with {reference} over shared seeds, simple regret at "
        f"{int(last['checkpoint'].iloc[0])} evaluations:",
        *[f"  {v}" for v in last["verdict"]],
    ]


def _failures(errors: dict[str, str], where: str) -> list[str]:
    """Lines naming the failed runs (none when ``errors`` is empty)."""
    if not errors:
        return []
    return [
        "",
        f"{len(errors)} run(s) failed (see {where}):",
        *[f"  {k}: {v}" for k, v in errors.items()],
    ]


def _check_standin(standin: str, problem: str, table_path: Path | None) -> None:
    """``--standin``: one problem, no ``--table``, a variant it ships (or all)."""
    from bolt_pco64.instances import get_instance
    from bolt_pco64.tables.standins import check_variant

    if problem == "all" or table_path is not None:
        raise click.BadParameter(
            "expected one --problem and no --table with --standin",
            param_hint="'--standin'",
        )
    if standin != "all":
        try:
            check_variant(get_instance(problem), standin)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--standin'") from err


def _standin(standin: str, problem: str) -> Any:
    """The stand-in variant's table (the simulated-data warning once)."""
    from bolt_pco64.tables.standins import STANDIN_PREFIX
    from bolt_pco64.tables.table import load_table

    return load_table(STANDIN_PREFIX + standin, instance=problem)


def _bench_variants(run: _Runner, problem: str) -> None:
    """``bench --standin all``: every variant, then the robustness report."""
    from bolt_pco64.bench.variants import StandinVariants
    from bolt_pco64.tables.table import SimulatedTableWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        result = run(StandinVariants(problem))
    lines = [
        *_table_lines(result.results),
        result.markdown.rstrip(),
        *_failures(result.errors, "each meta.json"),
        "",
    ]
    lines.append(
        f"done in {time.perf_counter() - t0:.0f} s; each variant's results in "
        f"{result.out}/<variant>/; robustness: {result.out}/robustness.md."
    )
    lines.append(
        "NOTE: every variant is a SIMULATED stand-in table, not measured data."
    )
    click.echo("\n".join(lines))


def _bench_all(run: _Runner) -> None:
    """``bench --problem all``: every instance, then the combined summary."""
    from bolt_pco64.bench.family import Family
    from bolt_pco64.tables.table import SimulatedTableWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        result = run(Family(_PROBLEM_NAMES))
    from bolt_pco64.bench.report.markdown import terminal_summary

    lines = [
        *_table_lines(result.results),
        terminal_summary(result.summary, run.spec.budget, first_column="problem"),
        *_failures(result.errors, "each meta.json"),
    ]
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done in {time.perf_counter() - t0:.0f} s; "
        f"each problem's results in {result.out}/<problem>/."
    )
    lines.append(
        f"full tables: {result.out / 'summary.md'} (paired comparisons with "
        f"{run.spec.reference}: {result.out}/<problem>/summary.md)"
    )
    lines.append(f"plot: {result.plot}")
    lines.append(f"cost report: {result.out / 'cost_summary.md'}")
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


def _table_lines(results: Any) -> list[str]:
    """One :func:`table_line` per part of a family or of the variants."""
    return [
        table_line(r.table, f"table of {label}")
        for label, r in results.items()
        if r.table is not None
    ]
