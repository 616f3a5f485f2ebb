"""A protocol that says which methods differ, and when it cannot.

From a comparison's per-evaluation records to a
:class:`~bolt_pco64.bench.protocol.analysis.ProtocolResult`
(:func:`~bolt_pco64.bench.protocol.analysis.run_protocol`: the declared
:mod:`~bolt_pco64.bench.protocol.design`, each run's outcome on the
:mod:`~bolt_pco64.bench.protocol.endpoints`, every pair
(:mod:`~bolt_pco64.bench.protocol.pairs`), the groups that cannot be told
apart (:mod:`~bolt_pco64.bench.protocol.groups`) and the seeds a comparison
needs (:mod:`~bolt_pco64.bench.protocol.power`)); its page, Kaplan-Meier
figure and files (:mod:`~bolt_pco64.bench.protocol.render`); over the family
of problems, the suite table (:mod:`~bolt_pco64.bench.protocol.suite`). What
the protocol is: ``docs/protocol.md``.

The names of ``__all__`` (declared in ``__init__.pyi``, which type checkers
read) load their module when first used (``lazy_loader``), so that
``from bolt_pco64.bench.protocol import PROTOCOL_SEEDS`` loads no statistics
library.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
