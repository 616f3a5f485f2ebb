"""Benchmark harness: compare BO methods on the pco problems (``bolt-pco64 bench``).

A *run* is one method optimising one problem from one seed for ``budget``
evaluations (the initial design included); a *comparison* is every method
from every seed, written into one output directory. The parts:

- :mod:`~bolt_pco64.bench.spec`: one description of a comparison and every
  default: :class:`~bolt_pco64.bench.spec.BenchConfig` (what makes runs
  comparable), :class:`~bolt_pco64.bench.spec.ComparisonSpec` (methods,
  seeds, reference on top; checked once when made) and the presets
  :data:`~bolt_pco64.bench.spec.DEFAULTS`, :data:`~bolt_pco64.bench.spec.QUICK`
  and :data:`~bolt_pco64.bench.spec.QUICK_FAMILY`;
- :mod:`~bolt_pco64.bench.contract`: what a method is
  (:class:`~bolt_pco64.bench.contract.Method`: ``propose``, and optionally its own
  ``n_init``, ``new_state``, ``recommend`` and ``predict``), what it sees
  (:class:`~bolt_pco64.bench.contract.RunContext`) and what names a run
  (:class:`~bolt_pco64.bench.contract.RunKey`);
- :mod:`~bolt_pco64.bench.methods`: the built-in methods, listed once
  (:data:`~bolt_pco64.bench.methods.catalog.BUILTINS`), and
  :mod:`~bolt_pco64.bench.methods.registry`, where a comparison finds a method
  by name (:data:`~bolt_pco64.bench.methods.registry.METHODS`, read-only;
  :func:`~bolt_pco64.bench.methods.registry.register_method`; the
  ``bolt_pco64.methods`` entry-point group;
  :func:`~bolt_pco64.bench.methods.registry.method_registry`, and a
  ``registry=`` argument wherever a method is looked up);
- :mod:`~bolt_pco64.bench.proposals`: what a method returns (rows, or points of the box
  that are snapped to rows; repeats) and
  :func:`~bolt_pco64.bench.proposals.resolve_proposal`;
- :mod:`~bolt_pco64.bench.run`: one run (:func:`~bolt_pco64.bench.run.run_one`),
  executed by :mod:`~bolt_pco64.bench.loop` on the simulated clock
  (:mod:`~bolt_pco64.bench.clock`, :mod:`~bolt_pco64.bench.early`);
- :mod:`~bolt_pco64.bench.records`: a run's records
  (:func:`~bolt_pco64.bench.records.record_columns`: one row per evaluation, regret,
  cost) and :class:`~bolt_pco64.bench.records.RunOutcome`;
- :mod:`~bolt_pco64.bench.store`: :class:`~bolt_pco64.bench.store.ResultStore`, the
  output directory (per-run files, resume, failures, ``meta.json``), written atomically;
- :mod:`~bolt_pco64.bench.backends`: in-process, local processes and Dask behind one
  :class:`~bolt_pco64.bench.backends.Backend` interface, with bit-identical records;
- :mod:`~bolt_pco64.bench.report`: the report, from the records alone: tables
  (:func:`~bolt_pco64.bench.report.tables.summarize`), Markdown
  (:func:`~bolt_pco64.bench.report.markdown.summary_markdown`), plots
  (:func:`~bolt_pco64.bench.report.plots.plot_regret`), the cost report and the
  pages (:func:`~bolt_pco64.bench.report.pages.write_report`);
- :mod:`~bolt_pco64.bench.regenerate`: :func:`regenerate`, every report of a
  result folder rewritten from its records (``bolt-pco64 report DIR``);
- :mod:`~bolt_pco64.bench.comparison`: the one entry point:
  :func:`~bolt_pco64.bench.comparison.run_comparison`, which runs a
  :class:`~bolt_pco64.bench.spec.ComparisonSpec` on a
  :class:`~bolt_pco64.bench.comparison.TableSet` -- one table
  (:class:`~bolt_pco64.bench.comparison.SingleTable`), each problem of the family
  (:class:`~bolt_pco64.bench.family.Family`) or each stand-in variant
  (:class:`~bolt_pco64.bench.variants.StandinVariants`);
- :mod:`~bolt_pco64.bench.plan`: :class:`~bolt_pco64.bench.plan.BenchPlan`, what depends
  on the tables (tables, output directories, stored runs) checked before anything is
  created, and :func:`~bolt_pco64.bench.plan.execute_plan`, which runs and reports it;
- :mod:`~bolt_pco64.bench.family`: :class:`~bolt_pco64.bench.family.Family`, with the
  combined report;
- :mod:`~bolt_pco64.bench.variants`:
  :class:`~bolt_pco64.bench.variants.StandinVariants`, with the robustness report.

Reliability: each finished run is written atomically to
``OUT/runs/<method>__seed<seed>.parquet``, then ``runs.parquet`` and
``meta.json`` are rewritten atomically, so a killed process leaves every file
valid. A rerun into the same directory skips the complete runs (and reruns
failed ones); its report covers every run the directory holds (a rerun of
some of the methods does not shrink the comparison); it refuses a directory
holding runs of a different configuration (budget, n_init, q, noise or
table). A method that raises ends
only its own run: its rows so far are kept and the error goes to
``meta.json``. At the end ``summary.csv``, ``summary.md`` and ``regret.png``
are written. A run in progress when the process stops is not kept; a rerun
repeats it. Worker processes of ``jobs`` exit when the harness dies.

Writing your own method::

    import torch
    from bolt_pco64.bench import (
        ComparisonSpec, RunContext, register_method, run_comparison,
    )

    @register_method("lowest_memory_first")
    def lowest_memory_first(ctx: RunContext) -> torch.Tensor:
        # ctx.untried: canonical row indices not evaluated yet (ascending)
        mem = ctx.problem.table.column("peak_mem")[ctx.untried]
        return ctx.untried[torch.argsort(mem, stable=True)[: ctx.q]]

    spec = ComparisonSpec(["random", "lowest_memory_first"], seeds=5, budget=30)
    run_comparison(spec, out="my-results")

A method returns ``q`` distinct untried row indices, or a ``q x d`` floating
tensor of points of the box, which the harness snaps with ``problem.lookup``
(a point may snap to a row already evaluated: a repeat, charged as an
evaluation and returning the first observation). It must draw randomness
only from ``ctx.generator`` / ``ctx.step_seed``, and may add the time it spends
fitting models to ``ctx.fit_seconds``. For ``jobs``/Dask backends the function
must be importable by the workers (defined in a module, or in a script run
as ``__main__``; Dask pickles it by value).

A method with a model, or its own initial design, subclasses
:class:`~bolt_pco64.bench.contract.Method`::

    from bolt_pco64.bench import Method, Prediction, register_method

    class MyEI(Method):
        n_init = 3  # starts from the first 3 rows of the seed's shared design

        def new_state(self):  # the run's ctx.state, made when it starts
            return MyState()  # e.g. a dataclass with a field gp = None

        def propose(self, ctx):
            ctx.state.gp = ...  # fit on ctx.X, ctx.y
            ...  # choose among ctx.available (untried, not pending)

        def recommend(self, ctx):  # the row it would return now
            ...  # default: the best observed feasible row

        def predict(self, ctx, X):  # the prior of --early-stop posterior
            post = ctx.state.gp.posterior(X)  # default: None, no model
            return Prediction(post.mean.reshape(-1), post.variance.reshape(-1))

    register_method("my_ei", MyEI())

Another package registers its methods through the entry-point group
``bolt_pco64.methods`` (:mod:`~bolt_pco64.bench.methods.registry`); they then appear
in ``bolt-pco64 bench --methods`` and its ``--help``.

The names below are imported from their modules on first use, so that
``import bolt_pco64.bench.spec`` (the command line's ``--help``) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bolt_pco64.bench.backends import (
        Backend,
        BackendError,
        DaskBackend,
        InProcessBackend,
        ProcessBackend,
        make_backend,
    )
    from bolt_pco64.bench.comparison import SingleTable, TableSet, run_comparison
    from bolt_pco64.bench.contract import (
        FunctionMethod,
        Method,
        MethodFn,
        ObjectiveModel,
        Prediction,
        RunContext,
        RunKey,
    )
    from bolt_pco64.bench.family import Family, FamilyResult
    from bolt_pco64.bench.methods.registry import (
        ENTRY_POINT_GROUP,
        METHODS,
        MethodRegistry,
        get_method,
        method_names,
        method_registry,
        register_method,
    )
    from bolt_pco64.bench.plan import BenchPlan, BenchResult, execute_plan, make_plan
    from bolt_pco64.bench.proposals import Proposal, resolve_proposal
    from bolt_pco64.bench.records import RunOutcome, record_columns
    from bolt_pco64.bench.regenerate import regenerate
    from bolt_pco64.bench.report.facts import cost_label
    from bolt_pco64.bench.report.markdown import summary_markdown
    from bolt_pco64.bench.report.plots import plot_regret
    from bolt_pco64.bench.report.tables import checkpoints_for, summarize
    from bolt_pco64.bench.run import run_one
    from bolt_pco64.bench.spec import (
        DEFAULTS,
        QUICK,
        QUICK_FAMILY,
        BenchConfig,
        ComparisonSpec,
        ComparisonSpecError,
        Preset,
    )
    from bolt_pco64.bench.store import (
        LaneSettingError,
        OutputDirError,
        ResultStore,
        check_output_dir,
    )
    from bolt_pco64.bench.variants import StandinVariants, VariantsResult

_WHERE: dict[str, str] = {
    "Backend": "backends",
    "BackendError": "backends",
    "DaskBackend": "backends",
    "InProcessBackend": "backends",
    "ProcessBackend": "backends",
    "make_backend": "backends",
    "ComparisonSpec": "spec",
    "ComparisonSpecError": "spec",
    "SingleTable": "comparison",
    "TableSet": "comparison",
    "run_comparison": "comparison",
    "Family": "family",
    "FamilyResult": "family",
    "StandinVariants": "variants",
    "VariantsResult": "variants",
    "BenchResult": "plan",
    "DEFAULTS": "spec",
    "QUICK": "spec",
    "QUICK_FAMILY": "spec",
    "BenchConfig": "spec",
    "Preset": "spec",
    "ENTRY_POINT_GROUP": "contract",
    "METHODS": "methods.registry",
    "MethodRegistry": "methods.registry",
    "method_registry": "methods.registry",
    "FunctionMethod": "contract",
    "Method": "contract",
    "MethodFn": "contract",
    "ObjectiveModel": "contract",
    "Prediction": "contract",
    "RunContext": "contract",
    "RunKey": "contract",
    "get_method": "methods.registry",
    "method_names": "methods.registry",
    "register_method": "methods.registry",
    "BenchPlan": "plan",
    "execute_plan": "plan",
    "make_plan": "plan",
    "Proposal": "proposals",
    "resolve_proposal": "proposals",
    "checkpoints_for": "report.tables",
    "cost_label": "report.facts",
    "plot_regret": "report.plots",
    "regenerate": "regenerate",
    "summarize": "report.tables",
    "summary_markdown": "report.markdown",
    "RunOutcome": "records",
    "record_columns": "records",
    "run_one": "run",
    "LaneSettingError": "store",
    "OutputDirError": "store",
    "ResultStore": "store",
    "check_output_dir": "store",
}

__all__ = [
    "DEFAULTS",
    "ENTRY_POINT_GROUP",
    "METHODS",
    "QUICK",
    "QUICK_FAMILY",
    "Backend",
    "BackendError",
    "BenchConfig",
    "BenchPlan",
    "BenchResult",
    "ComparisonSpec",
    "ComparisonSpecError",
    "DaskBackend",
    "Family",
    "FamilyResult",
    "FunctionMethod",
    "InProcessBackend",
    "LaneSettingError",
    "Method",
    "MethodFn",
    "MethodRegistry",
    "ObjectiveModel",
    "OutputDirError",
    "Prediction",
    "Preset",
    "ProcessBackend",
    "Proposal",
    "ResultStore",
    "RunContext",
    "RunKey",
    "RunOutcome",
    "SingleTable",
    "StandinVariants",
    "TableSet",
    "VariantsResult",
    "check_output_dir",
    "checkpoints_for",
    "cost_label",
    "execute_plan",
    "get_method",
    "make_backend",
    "make_plan",
    "method_names",
    "method_registry",
    "plot_regret",
    "record_columns",
    "regenerate",
    "register_method",
    "resolve_proposal",
    "run_comparison",
    "run_one",
    "summarize",
    "summary_markdown",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
