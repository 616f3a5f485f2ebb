"""The ``bolt-pco64`` command line: parsing, messages, lazy imports.

A bad option value is a usage error in click's form (usage, a hint, and an
``Error:`` line naming the option, e.g. ``Invalid value for '--noise':
expected 'measured' or a number >= 0, got -1``). Every other failure is one
line on standard error. Both exit with status 2.

Commands import what they need when they run: ``--help``, ``bench --help``
and ``info`` do not import BoTorch or GPyTorch. Third-party deprecation
warnings that a user cannot act on (:data:`QUIET_WARNINGS`) are not shown,
in this process or in the harness's worker processes.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from bolt_pco64.bench.config import DEFAULTS, EARLY_STOP_CHOICES, QUICK, QUICK_FAMILY
from bolt_pco64.instances import INSTANCES, Instance, get_instance

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


#: One line on each built-in method, for ``bench --help`` (which does not
#: import the registry, :data:`bolt_pco64.bench.methods.METHODS`, and with it
#: torch; a test checks that the two name the same methods).
METHOD_HELP: dict[str, str] = {
    "random": "uniform over the untried configurations",
    "qlognei": "constrained qLogNEI over the untried configurations",
    "qlogei": "constrained qLogEI over the untried configurations",
    "ts": "constrained Thompson sampling over the untried configurations",
    "naive": "qLogNEI that records an OOM as the worst feasible value",
    "gpc_ei": "LogEI x P(feasible) of a GP classifier of ran_successfully",
    "tobit_ei": "LogEI x P(margin <= 0) of a GP of the memory margin, "
    "crashes as censored observations",
    "gpc_pof": "LogEI where the classifier's P(feasible) reaches a threshold",
    "qlognei-box": "qlognei optimised over the continuous box, snapped to rows",
    "qlognei-mixed": "qlognei optimised over the integer lattice, snapped to rows",
    "eipu": "qlognei per unit of expected cost (crash risk counted); use "
    "with --budget-hours",
    "ei_cool": "eipu with the cost's exponent cooling from 1 to 0 as the "
    "budget is spent (Lee et al. 2020)",
    "prior_ei": "qlognei on GPs with performance-model prior means "
    "(throughput, memory margin), from 3 initial rows",
    "prior_ei_tp": "prior_ei with the throughput prior only (ablation)",
}


class _BenchCommand(_Command):
    """``bench``, whose help ends with the methods it can compare."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, text) for name, text in METHOD_HELP.items()]
        registry = sys.modules.get("bolt_pco64.bench.methods")
        if registry is not None:  # methods registered in this process, too
            rows += [
                (name, "registered in this process")
                for name in registry.METHODS
                if name not in METHOD_HELP
            ]
        from bolt_pco64.bench.contract import method_entry_points

        rows += [
            (name, f"from the entry point {ep.value}")
            for name, ep in sorted(method_entry_points().items())
            if name not in dict(rows)
        ]
        with formatter.section("Methods (for --methods and --reference)"):
            formatter.write_dl(rows)
        super().format_epilog(ctx, formatter)


class _Main(click.Group):
    """The command group; every invocation runs with third-party warnings hidden."""

    context_class = _Context
    command_class = _Command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with _quiet_third_party():
            return super().main(*args, **kwargs)


class _Noise(click.ParamType):
    """``--noise``: ``measured`` or a standard deviation ``>= 0``."""

    name = "measured|STD"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float | str:
        if value == "measured" or isinstance(value, float):
            return value
        text = str(value).strip()
        if text.lower() == "measured":
            return "measured"
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number >= 0):
            self.fail(f"expected 'measured' or a number >= 0, got {value}", param, ctx)
        return number


class _Methods(click.ParamType):
    """``--methods``: comma-separated names of registered methods."""

    name = "NAME[,NAME...]"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> list[str]:
        if isinstance(value, list):
            return value
        from bolt_pco64.bench.methods import method_names

        known = method_names()
        names = list(dict.fromkeys(m.strip() for m in str(value).split(",")))
        names = [m for m in names if m]
        unknown = [m for m in names if m not in known]
        if not names or unknown:
            self.fail(
                f"expected comma-separated names from {', '.join(sorted(known))}, "
                f"got {', '.join(unknown) if unknown else repr(value)}",
                param,
                ctx,
            )
        return names


class _Method(click.ParamType):
    """``--reference``: the name of one registered method."""

    name = "NAME"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        from bolt_pco64.bench.methods import method_names

        known = method_names()
        name = str(value).strip()
        if name not in known:
            self.fail(
                f"expected one of {', '.join(sorted(known))}, got {value!r}",
                param,
                ctx,
            )
        return name


class _MethodsOption(click.Option):
    """``--methods`` whose help lists every method, entry points included,
    when the help is shown (not when the command line is imported)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from bolt_pco64.bench.methods import method_names

        record = super().get_help_record(ctx)
        if record is None:
            return None
        return record[0], f"{record[1]} Available: {', '.join(method_names())}."


def _one_line(err: BaseException, origin: str | None = None) -> CLIError:
    text = " ".join(str(err).split())
    return CLIError(f"{origin}: {text}" if origin else text)


def _table_origin(table_path: Path | None, instance: Instance) -> str | None:
    """What named the table: ``--table``, the environment variable, or nothing."""
    if table_path is not None:
        return "--table"
    return instance.env_table if os.environ.get(instance.env_table) else None


def _load(table_path: Path | None, problem: str = "pco64") -> Any:
    """``problem``'s table, or a one-line :class:`CLIError` naming its origin.

    The stand-in's Python warning is not shown: the commands say it in words.
    """
    from bolt_pco64.table import SimulatedTableWarning, TableError, load_table

    instance = get_instance(problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            return load_table(table_path, instance=instance)
    except (TableError, OSError, ValueError) as err:
        raise _one_line(err, _table_origin(table_path, instance)) from err


def _published_check(table: Any) -> list[tuple[str, str, str, bool]]:
    """``(figure, published, this table, equal)`` for each published figure.

    Values are compared as published: the best value to 5 decimals (as the
    pco64 card gives it), peaks to 0.1 GB.
    """
    inst: Instance = table.instance
    pub = inst.published
    frame = table.frame
    feasible = frame["ran_successfully"].to_numpy(dtype=bool)
    best = table.best_row
    best_config = tuple(int(v) for v in table.X[best].tolist())
    checks = [
        ("rows", f"{pub.rows}", f"{len(table)}"),
        ("feasible", f"{pub.feasible}", f"{table.n_feasible}"),
        (
            "best throughput_mean",
            f"{pub.best_value:.5f}",
            f"{frame['throughput_mean'].iloc[best]:.5f}",
        ),
        (
            "best configuration (encoded)",
            ",".join(map(str, pub.best_config)),
            ",".join(map(str, best_config)),
        ),
    ]
    if pub.best_peak_mem_gb is not None:
        checks.append(
            (
                "best peak_mem (GB)",
                f"{pub.best_peak_mem_gb:.1f}",
                f"{frame['peak_mem'].iloc[best]:.1f}",
            )
        )
    if pub.max_feasible_peak_gb is not None:
        checks.append(
            (
                "largest feasible peak_mem (GB)",
                f"{pub.max_feasible_peak_gb:.1f}",
                f"{frame['peak_mem'].to_numpy()[feasible].max():.1f}",
            )
        )
    return [(name, want, got, want == got) for name, want, got in checks]


_PROBLEM_NAMES = sorted(INSTANCES)


def _problem_option(allow_all: bool = False) -> Any:
    names = [*_PROBLEM_NAMES, "all"] if allow_all else _PROBLEM_NAMES
    return click.option(
        "--problem",
        type=click.Choice(names),
        default="pco64",
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


@main.command(
    short_help="Show the table in use and check it against the published figures."
)
@_problem_option()
@click.option(
    "--table",
    "table_path",
    type=_TABLE_TYPE,
    default=None,
    help="Inspect this table file (parquet or raw CSV) instead of the default.",
)
def info(problem: str, table_path: Path | None) -> None:
    """Which table is in use, its size, bounds and best configuration, and
    whether it meets the figures published about the measured table."""
    from bolt_pco64.table import decode_inputs

    table = _load(table_path, problem)
    instance = table.instance
    best = table.best_row
    row = table.frame.iloc[best]
    raw = decode_inputs(table.X[best], instance=instance)
    bounds = table.bounds
    checks = _published_check(table)
    missed = [name for name, _, _, ok in checks if not ok]
    what = "the stand-in" if table.is_simulated else "this table"
    lines = [
        f"problem:    {instance.name} ({instance.num_gpus} GPUs on "
        f"{instance.num_hosts} hosts, {instance.gpu_memory_gb:g} GB each)",
        f"table:      {table.source}",
        f"rows:       {len(table)}",
        f"feasible:   {table.n_feasible} ({len(table) - table.n_feasible} ran out of memory)",
        "bounds (encoded inputs):",
        *(
            f"  {name:<24} {bounds[0, k].item():g} .. {bounds[1, k].item():g}"
            for k, name in enumerate(instance.input_columns)
        ),
        "best configuration:",
        "  " + ", ".join(f"{k}={v}" for k, v in raw.items()),
        f"  throughput_mean = {row['throughput_mean']:.5f}",
        f"  peak_mem        = {row['peak_mem']:.1f} GB",
        f"published figures ({instance.dataset_id}): published / this table",
        *(
            f"  {name:<31} {want:>16} {got:>16}  {'ok' if ok else 'DIFFERS'}"
            for name, want, got, ok in checks
        ),
        f"{what} meets its published figures"
        if not missed
        else f"{what} does NOT meet its published figures ({', '.join(missed)})",
    ]
    if table.is_simulated:
        lines.append("NOTE: these numbers are SIMULATED (stand-in), not measured.")
    click.echo("\n".join(lines))


@main.command(
    short_help="Download the measured table from the Hugging Face Hub (needs network)."
)
@_problem_option()
@click.option(
    "--data-home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Install here instead of BOLT_PCO64_HOME / the user data folder.",
)
@click.option("--force", is_flag=True, help="Download again even if installed.")
def fetch(problem: str, data_home: Path | None, force: bool) -> None:
    """Download the measured table from the Hugging Face Hub (needs network).

    The download is validated before it is installed; a failed or invalid
    download changes nothing.
    """
    from bolt_pco64.fetch import FetchError, fetch_table
    from bolt_pco64.table import TableError

    try:
        path = fetch_table(data_home, instance=problem, force=force)
    except (FetchError, TableError, OSError) as err:
        raise _one_line(err) from err
    click.echo(f"measured table installed: {path}")


@main.command(
    short_help="Write the SIMULATED stand-in table (seed 0: the shipped file)."
)
@_problem_option()
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Parquet file to write (atomically).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the noise.")
@click.option(
    "--variant",
    default=None,
    help="Stand-in variant (bolt_pco64.standins.STANDIN_VARIANTS) [default: the "
    "problem's default variant].",
)
def generate(problem: str, out: Path, seed: int, variant: str | None) -> None:
    """Write the SIMULATED stand-in table (seed 0 reproduces the shipped file)."""
    from bolt_pco64.instances import get_instance
    from bolt_pco64.simulate import write_simulated_table
    from bolt_pco64.standins import check_variant

    try:
        check_variant(get_instance(problem), variant)
    except ValueError as err:
        raise CLIError(f"--variant: {err}") from err
    try:
        chosen = {} if variant is None else {"variant": variant}
        path = write_simulated_table(out, seed=seed, instance=problem, **chosen)
    except OSError as err:
        raise CLIError(f"--out: expected a writable path, got {out}: {err}") from err
    click.echo(str(path))


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
    default=DEFAULTS.workers,
    show_default=True,
    help="Runs in flight at once on the simulated clock, each on its own "
    "cluster; the method sees the others as pending.",
)
@click.option(
    "--early-stop",
    type=click.Choice(EARLY_STOP_CHOICES),
    default=DEFAULTS.early_stop,
    show_default=True,
    help="Stop a run after a step when its estimate so far shows it will not "
    "beat the best: the runner's posterior rule, or Ax's percentile rule; a "
    "stopped run is charged the steps it ran.",
)
@click.option(
    "--n-init",
    type=click.IntRange(min=1),
    default=None,
    help=f"Initial design size [default: {DEFAULTS.n_init}].",
)
@click.option(
    "--q",
    type=click.IntRange(min=1),
    default=DEFAULTS.q,
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
    default=DEFAULTS.jobs,
    show_default=True,
    help="Local worker processes.",
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
    "--standin",
    default=None,
    help="Run on this stand-in variant (bolt_pco64.standins.STANDIN_VARIANTS), or "
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
    f"one of the compared methods [default: {DEFAULTS.reference}, or the first "
    f"method when {DEFAULTS.reference} is not compared].",
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
    dask_scheduler: str | None,
    table_path: Path | None,
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
    """
    from bolt_pco64.bench.benchmark import run_benchmark

    if problem == "all" and table_path is not None:
        raise click.BadParameter(
            "expected one --problem for a table file, got --problem all",
            param_hint="'--table'",
        )
    if standin is not None:
        _check_standin(standin, problem, table_path)
    if budget is not None and budget_hours is not None:
        raise click.BadParameter(
            "expected either --budget (evaluations) or --budget-hours, got both",
            param_hint="'--budget-hours'",
        )
    if problem == "all" and budget_hours is not None:
        raise click.BadParameter(
            "expected one --problem for a GPU-hour budget (runs of the problems "
            "differ in cost), got --problem all",
            param_hint="'--budget-hours'",
        )
    if standin == "all" and budget_hours is not None:
        raise click.BadParameter(
            "expected one --standin for a GPU-hour budget (runs of the variants "
            "differ in cost), got --standin all",
            param_hint="'--budget-hours'",
        )
    preset = (QUICK_FAMILY if problem == "all" else QUICK) if quick else DEFAULTS
    names = methods if methods is not None else list(preset.methods)
    reference = _reference(reference, names)
    out_dir = out if out is not None else Path(preset.out)
    if budget is None and budget_hours is None:
        budget = preset.budget
    n_init = n_init if n_init is not None else preset.n_init
    _check_settings(
        budget, n_init, q, noise, budget_hours=budget_hours, workers=workers
    )
    args: dict[str, Any] = {
        "methods": names,
        "seeds": seeds if seeds is not None else preset.seeds,
        "budget": budget,
        "budget_hours": budget_hours,
        "workers": workers,
        "early_stop": early_stop,
        "n_init": n_init,
        "q": q,
        "out": str(out_dir),
        "quick": quick,
        "jobs": jobs,
        "dask_scheduler": dask_scheduler,
        "table": None if table_path is None else str(table_path),
        "noise": noise,
        "problem": problem,
        "reference": reference,
    }
    if standin is not None:
        args["standin"] = standin
    if problem == "all":
        _bench_all(args, out_dir, no_progress)
        return
    if standin == "all":
        _bench_variants(args, out_dir, no_progress)
        return
    table = (
        _load(table_path, problem) if standin is None else _standin(standin, problem)
    )
    _check_settings(
        budget, n_init, q, noise, len(table), budget_hours=budget_hours, workers=workers
    )
    _check_run_times(table, table_path)
    t0 = time.perf_counter()
    try:
        result = run_benchmark(
            table=table,
            budget_hours=budget_hours,
            **_harness_arguments(args, out_dir, no_progress),
        )
    except (ValueError, OSError) as err:
        raise _one_line(err) from err
    from bolt_pco64.bench.report import terminal_summary

    lines = [
        terminal_summary(result.summary, _shown_budget(args["budget"], result)),
        "",
        *_comparison_lines(result.out, reference, names, result.summary),
        *_failures(result.errors, "meta.json"),
    ]
    resumed = len(result.summary) and (
        int(result.summary["runs"].sum() + result.summary["failed"].sum())
        - len(result.ran)
    )
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done, {resumed} resumed from {result.out}, "
        f"in {time.perf_counter() - t0:.0f} s."
    )
    lines.append(f"full tables: {result.out / 'summary.md'}")
    lines.append(f"plot: {result.plot}")
    lines.append(f"cost report: {result.out / 'cost_summary.md'}")
    if table.is_simulated:
        lines += textwrap.wrap(
            "NOTE: these results are on the SIMULATED stand-in table, not measured "
            "data (`bolt-pco64 fetch` installs the measured one).",
            80,
        )
    click.echo("\n".join(lines))


def _shown_budget(budget: int | None, result: Any) -> int:
    """The evaluations the summary reports: ``--budget``, or on a GPU-hour
    budget the fewest any complete run made
    (:func:`~bolt_pco64.bench.costmetrics.evaluation_horizon`)."""
    if budget is not None:
        return budget
    from bolt_pco64.bench.costmetrics import evaluation_horizon

    failed = {(m, int(s)) for m, s in (k.rsplit("/", 1) for k in result.errors)}
    return evaluation_horizon(result.records, failed)


def _check_run_times(table: Any, table_path: Path | None) -> None:
    """A one-line :class:`CLIError` naming the table's origin if the time
    model cannot charge its runs (:class:`~bolt_pco64.costs.TimeModel`)."""
    from bolt_pco64.costs import TimeModel

    try:
        TimeModel(table)
    except ValueError as err:
        origin = _table_origin(table_path, table.instance) or "table"
        raise _one_line(err, f"{origin} (run times)") from err


def _reference(reference: str | None, methods: list[str]) -> str:
    """``--reference``, checked against the compared methods before anything
    runs (:func:`~bolt_pco64.bench.methods.check_reference`, which does not
    import torch)."""
    from bolt_pco64.bench.methods import check_reference

    try:
        return check_reference(reference, methods)
    except ValueError:
        raise CLIError(
            f"--reference: expected one of the compared methods "
            f"({', '.join(methods)}), got {reference!r}; add it to --methods or "
            "choose another"
        ) from None


#: The command-line option of each setting that the harness's checks name.
_OPTIONS = {
    "n_init": "--n-init",
    "budget_hours": "--budget-hours",
    "budget": "--budget",
    "q": "--q",
    "noise": "--noise",
    "workers": "--workers",
}


def _check_settings(
    budget: int | None,
    n_init: int,
    q: int,
    noise: float | str | None,
    rows: int | None = None,
    *,
    budget_hours: float | None = None,
    workers: int = DEFAULTS.workers,
) -> None:
    """The harness's check of the settings (:meth:`BenchConfig.check`), with
    its message in the options' names, as a one-line error led by the first
    option it mentions, e.g. ``Error: --n-init: expected --n-init <= --budget,
    got --n-init=10 > --budget=5``."""
    from bolt_pco64.bench.config import BenchConfig

    try:
        BenchConfig(
            budget=budget,
            n_init=n_init,
            q=q,
            noise=noise,
            budget_hours=budget_hours,
            workers=workers,
        ).check(rows)
    except ValueError as err:
        raise _option_error(err) from err


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

    from bolt_pco64.bench.report import no_comparisons_reason

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


def _harness_arguments(
    args: dict[str, Any], out_dir: Path, no_progress: bool
) -> dict[str, Any]:
    """The keyword arguments ``run_benchmark`` and ``run_problems`` share,
    from ``bench``'s resolved ``args`` (recorded as ``arguments``)."""
    return {
        "workers": args["workers"],
        "early_stop": args["early_stop"],
        "methods": args["methods"],
        "seeds": args["seeds"],
        "budget": args["budget"],
        "n_init": args["n_init"],
        "q": args["q"],
        "out": out_dir,
        "noise": args["noise"],
        "jobs": args["jobs"],
        "dask_scheduler": args["dask_scheduler"],
        "progress": not no_progress,
        "arguments": args,
        "reference": args["reference"],
    }


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
    from bolt_pco64.standins import check_variant

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
    from bolt_pco64.standins import STANDIN_PREFIX
    from bolt_pco64.table import load_table

    return load_table(STANDIN_PREFIX + standin, instance=problem)


def _bench_variants(args: dict[str, Any], out_dir: Path, no_progress: bool) -> None:
    """``bench --standin all``: every variant, then the robustness report."""
    from bolt_pco64.bench.variants import run_variants
    from bolt_pco64.table import SimulatedTableWarning

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            result = run_variants(
                problem=args["problem"],
                **_harness_arguments(args, out_dir, no_progress),
            )
    except (ValueError, OSError) as err:
        raise _one_line(err) from err
    lines = [result.markdown.rstrip(), *_failures(result.errors, "each meta.json")]
    lines.append("")
    lines.append(
        f"done in {time.perf_counter() - t0:.0f} s; each variant's results in "
        f"{result.out}/<variant>/; robustness: {result.out}/robustness.md."
    )
    lines.append(
        "NOTE: every variant is a SIMULATED stand-in table, not measured data."
    )
    click.echo("\n".join(lines))


def _bench_all(args: dict[str, Any], out_dir: Path, no_progress: bool) -> None:
    """``bench --problem all``: every instance, then the combined summary."""
    from bolt_pco64.bench.family import run_problems
    from bolt_pco64.table import SimulatedTableWarning, TableError

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            result = run_problems(
                problems=_PROBLEM_NAMES,
                **_harness_arguments(args, out_dir, no_progress),
            )
    except (TableError, ValueError, OSError) as err:
        raise _one_line(err) from err
    from bolt_pco64.bench.report import terminal_summary

    lines = [
        terminal_summary(result.summary, args["budget"], first_column="problem"),
        *_failures(result.errors, "each meta.json"),
    ]
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done in {time.perf_counter() - t0:.0f} s; "
        f"each problem's results in {result.out}/<problem>/."
    )
    lines.append(
        f"full tables: {result.out / 'summary.md'} (paired comparisons with "
        f"{args['reference']}: {result.out}/<problem>/summary.md)"
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
