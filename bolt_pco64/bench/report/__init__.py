"""A comparison's report: tables, plots and pages, from its records alone.

- :mod:`~bolt_pco64.bench.report.facts`: what a report says about its table
  (:class:`~bolt_pco64.bench.report.facts.TableFacts`, kept in ``meta.json``)
  and its cost unit (:func:`~bolt_pco64.bench.report.facts.cost_label`);
- :mod:`~bolt_pco64.bench.report.tables`: the per-method summary
  (:func:`~bolt_pco64.bench.report.tables.summarize`) and the paired
  comparisons with a reference method, as frames;
- :mod:`~bolt_pco64.bench.report.cost`: the cost metrics (time to target,
  ERT, regret against cost) as frames, and its page
  (:func:`~bolt_pco64.bench.report.cost.page.write_cost_report`);
- :mod:`~bolt_pco64.bench.report.markdown`: the frames as Markdown and as the
  terminal's summary;
- :mod:`~bolt_pco64.bench.report.plots`: the figures (regret, bands);
- :mod:`~bolt_pco64.bench.report.pages`: the files of a comparison
  (:func:`~bolt_pco64.bench.report.pages.write_report`: the summary page, then
  each of :data:`~bolt_pco64.bench.report.pages.REPORT_SECTIONS`), from one
  :class:`~bolt_pco64.bench.report.context.ReportContext`.

Nothing here runs a method or reads a table: ``bolt-pco64 report DIR``
(:mod:`bolt_pco64.bench.regenerate`) rewrites every page from the records and
``meta.json``.
"""
