"""The public names of :mod:`bolt_pco64.bench`: the one place each is spelled.

``__init__.py`` hands this file to ``lazy_loader.attach_stub``, which reads its
imports (relative ones only) and loads each name's module on first use; type
checkers read it as the package's interface, with the real types. ``X as X``
re-exports ``X`` to a type checker (PEP 484).
"""

from .spec import (
    BenchConfig as BenchConfig,
    ComparisonSpec as ComparisonSpec,
    ComparisonSpecError as ComparisonSpecError,
    DEFAULTS as DEFAULTS,
    Preset as Preset,
    QUICK as QUICK,
    QUICK_FAMILY as QUICK_FAMILY,
)
from .comparison import (
    SingleTable as SingleTable,
    TableSet as TableSet,
    run_comparison as run_comparison,
)
from .family import Family as Family, FamilyResult as FamilyResult
from .variants import (
    StandinVariants as StandinVariants,
    VariantsResult as VariantsResult,
)
from .plan import (
    BenchPlan as BenchPlan,
    BenchResult as BenchResult,
    execute_plan as execute_plan,
    make_plan as make_plan,
)
from .contract import (
    ENTRY_POINT_GROUP as ENTRY_POINT_GROUP,
    FunctionMethod as FunctionMethod,
    Method as Method,
    MethodFn as MethodFn,
    ObjectiveModel as ObjectiveModel,
    Prediction as Prediction,
    RunContext as RunContext,
    RunKey as RunKey,
)
from .methods.registry import (
    METHODS as METHODS,
    MethodRegistry as MethodRegistry,
    get_method as get_method,
    method_names as method_names,
    method_registry as method_registry,
    register_method as register_method,
)
from .proposals import Proposal as Proposal, resolve_proposal as resolve_proposal
from .run import run_one as run_one
from .records import RunOutcome as RunOutcome, record_columns as record_columns
from .store import (
    LaneSettingError as LaneSettingError,
    OutputDirError as OutputDirError,
    ResultStore as ResultStore,
    check_output_dir as check_output_dir,
)
from .backends import (
    Backend as Backend,
    BackendError as BackendError,
    DaskBackend as DaskBackend,
    InProcessBackend as InProcessBackend,
    ProcessBackend as ProcessBackend,
    make_backend as make_backend,
)
from .report.tables import checkpoints_for as checkpoints_for, summarize as summarize
from .report.markdown import summary_markdown as summary_markdown
from .report.plots import plot_regret as plot_regret
from .report.facts import cost_label as cost_label
from .regenerate import regenerate as regenerate
