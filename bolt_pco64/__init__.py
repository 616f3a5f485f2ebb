"""bolt_pco64: the pco parallelism-configuration benchmarks as BoTorch test problems.

``PCO16``, ``PCO32`` and ``PCO64`` serve the pco16, pco32 and pco64 instances
(``INSTANCES``): LLM-training throughput on 16, 32 and 64 GPUs by parallelism
configuration, with out-of-memory crashes as a hidden constraint. A user's
own sweep is served the same way: ``PCO(instance=Instance(...), table=path)``
(or ``read_instance("my_cluster.toml")`` for the instance).

Importing the package reads no table and loads nothing heavy: it parses its
``__init__.pyi`` (the public names and their modules, which type checkers
read) and each public name is imported from its module on first use
(``lazy_loader``, PEP 562), so that the command line starts without BoTorch.
A table is read when a problem is built or
:func:`~bolt_pco64.tables.table.load_table` is called.
"""

from importlib.metadata import PackageNotFoundError, version

import lazy_loader

__getattr__, _lazy_dir, _lazy_all = lazy_loader.attach_stub(__name__, __file__)

try:
    __version__ = version("bolt_pco64")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

__all__ = sorted([*_lazy_all, "__version__"])


def __dir__() -> list[str]:
    """The public names, ``__version__`` included (what ``dir()`` lists)."""
    return [*_lazy_dir(), "__version__"]
