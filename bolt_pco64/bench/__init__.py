"""Benchmark harness: compare BO methods on the pco problems (``bolt-pco64 bench``).

A *run* is one method optimising one problem from one seed for ``budget``
evaluations (the initial design included); a *comparison* is every method
from every seed, written into one output directory. The data flow: a
:class:`~bolt_pco64.bench.spec.ComparisonSpec` (:mod:`~bolt_pco64.bench.spec`)
is run by :func:`~bolt_pco64.bench.comparison.run_comparison` on a table set
(one table, the :class:`~bolt_pco64.bench.family.Family` or the
:class:`~bolt_pco64.bench.variants.StandinVariants`) through a checked
:class:`~bolt_pco64.bench.plan.BenchPlan`; each run
(:func:`~bolt_pco64.bench.run.run_one`, :mod:`~bolt_pco64.bench.loop` on the
simulated clock) asks a method (:mod:`~bolt_pco64.bench.contract`,
:mod:`~bolt_pco64.bench.methods`) for rows and writes its records
(:mod:`~bolt_pco64.bench.records`) into a
:class:`~bolt_pco64.bench.store.ResultStore`, atomically and resumably, on
one of the :mod:`~bolt_pco64.bench.backends`; :mod:`~bolt_pco64.bench.report`
writes the report from the records alone, and
:func:`~bolt_pco64.bench.regenerate.regenerate` rewrites it.

Writing and registering a method of your own: ``docs/benchmarking.md`` and
the tutorial ``examples/custom_method.py``; how the parts fit together:
``docs/architecture.md``.

The names of ``__all__`` (declared in ``__init__.pyi``, which type checkers
read) are imported from their modules on first use (``lazy_loader``), so that
``import bolt_pco64.bench.spec`` (the command line's ``--help``) stays light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
