"""The tables: where an instance's table is found, how it is checked and loaded.

Modules, in the order data flows (docs/architecture.md §5):

* :mod:`~bolt_pco64.tables.locations` -- where an instance's table files live;
* :mod:`~bolt_pco64.tables.validation` -- a raw frame checked against its card
  (:class:`~bolt_pco64.tables.validation.TableError`);
* :mod:`~bolt_pco64.tables.standins` -- the simulated stand-in recognised by
  its content, and its variants;
* :mod:`~bolt_pco64.tables.table` -- loading: a source -> a validated
  :class:`~bolt_pco64.tables.table.Table`;
* :mod:`~bolt_pco64.tables.fetch` -- installing the measured table;
* :mod:`~bolt_pco64.tables.estimators` -- a run's throughput from its step times;
* :mod:`~bolt_pco64.tables.time_model` -- what a row costs, in seconds and GPU-hours;
* :mod:`~bolt_pco64.tables.partial_runs` -- what a run has shown after its first steps;
* :mod:`~bolt_pco64.tables.simulate` -- the generator of the simulated stand-ins.

Nothing here imports the problem, the methods or the harness. The package
imports nothing on import; import the modules.
"""
