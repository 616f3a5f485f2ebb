"""Sphinx configuration of the bolt_pco64 documentation site.

Build it with ``bash .ci/docs`` (strict: every warning is an error) into
``docs/_build/html``. Why Sphinx and these extensions: ``about.md``.

Three parts of the site are made at build time, never copied by hand:

- the tutorials, by sphinx-gallery, which runs every script of ``examples/``
  (small budgets: ``sphinxext/gallery.py``) and renders its code, output and
  figures, so a tutorial that breaks fails the build;
- the results section (``results.md``, written below from the folders of
  ``docs/results/``), which includes each result's own README and files as
  they are in the checkout;
- the API reference, by autosummary from the docstrings.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from pathlib import Path

from docutils.nodes import Element, TextElement
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one
sys.path.insert(0, str(DOCS / "sphinxext"))

import bolt_pco64  # noqa: E402

# `python -m bolt_pco64` runs the command line when its module is imported;
# the API reference's module scan must not import it (the command line is
# documented through bolt_pco64.cli). autosummary skips mocked modules.
_entry = types.ModuleType("bolt_pco64.__main__")
_entry.__sphinx_mock__ = True  # type: ignore[attr-defined]
sys.modules.setdefault("bolt_pco64.__main__", _entry)
from api_index import (  # noqa: E402
    DOCUMENTED_AT_PACKAGE,
    own_page_names,
    shadowed_modules,
    write_public_names,
)
from results_index import write_results_index  # noqa: E402

project = "bolt_pco64"
author = "bolt_pco64 developers"
copyright = "bolt_pco64 developers"
release = bolt_pco64.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_templates",
    "sphinxext",
    "public-names.md",  # included by api.md
    "sg_execution_times.rst",  # sphinx-gallery's timings: CDN scripts (below)
    "tutorials/*.ipynb",
    "tutorials/*.py",
    "tutorials/*.md5",
    "tutorials/*.codeobj.json",
    "**/*.zip",
]
templates_path = ["_templates"]

# -- Markdown (MyST) ---------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3  # README-style links to "page.md#a-heading" resolve

# -- API reference -----------------------------------------------------------
# One page per public module (docs/_templates/autosummary/module.rst), its
# members documented inline, each object once: under the module that defines
# it (a package's re-exports, `from bolt_pco64 import PCO64`, are listed on
# the API page and link there), so every cross-reference has one target.
autosummary_generate = True
autosummary_ignore_module_all = True
autosummary_imported_members = False
# The exception: a package of DOCUMENTED_AT_PACKAGE (bolt_pco64.problem)
# documents its __all__ on its own page, at the paths users cite
# (bolt_pco64.problem.PCO64); its modules' pages hold their docstrings.
autosummary_context = {
    "documented_at_package": DOCUMENTED_AT_PACKAGE,
    # and the names of its modules' __all__ that its own leaves out, each on
    # its module's page (bolt_pco64.problem.arguments.TableLike).
    "own_page_names": own_page_names(),
    # bolt_pco64.tables.simulate.calibrate is a module and the function its package
    # imports from it; autosummary would document the function under the
    # module's name (the template autosummary/function.rst documents the module).
    "shadowed_modules": shadowed_modules(),
}
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "ignore-module-all": True,  # with members: those the module defines
}
autodoc_member_order = "bysource"
# Source links name the module an object is documented in, except under a
# package of DOCUMENTED_AT_PACKAGE, where they follow the object to the module
# that defines it (_follow_to_defining_module); following every object would
# send a NamedTuple's fields to their synthetic module (``namedtuple_RunKey``),
# which has no source page.
viewcode_follow_imported_members = True
autodoc_typehints = "description"
# Type hints link by their full name and show the short one.
autodoc_typehints_format = "fully-qualified"
python_use_unqualified_type_names = True
autodoc_class_signature = "separated"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
toc_object_entries_show_parents = "hide"  # the right bar lists a page's members

# -- Cross-references --------------------------------------------------------
# Every Python cross-reference resolves: nitpicky makes one that does not a
# warning, which the build's -W makes an error (tests/test_docs.py checks that
# this stays on and that no pattern below exempts a bolt_pco64 name).
nitpicky = True
# Objects of other projects: the site builds offline, so no intersphinx
# inventory (objects.inv) of Python, torch, BoTorch, pandas, ... can be
# fetched, and none of the installed packages ships one. A reference to one of
# them renders as code, without a link.
nitpick_ignore_regex = [
    (
        "py:.*",
        # third-party packages (np, pd: their usual aliases in docstrings),
        # then the standard library's modules that annotations name
        r"(?:torch|botorch|gpytorch|pandas|pd|numpy|np|optuna|optunahub|ax|dask"
        r"|matplotlib|scipy|tqdm|click"
        r"|collections|os|pathlib|abc|numbers|dataclasses|typing|importlib)"
        r"(?:\..+)?",
    ),
    # The same objects by the short name of a module's type-checking-only
    # import (``if TYPE_CHECKING: from torch import Tensor``): autodoc cannot
    # evaluate such an annotation and shows it as written.
    (
        "py:class",
        r"Tensor|SingleTaskGP|Model|AcquisitionFunction|Path|PathLike|EntryPoint|Figure|Axes",
    ),
]

# -- Tutorials ---------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "tutorials"),
    "filename_pattern": r"\.py$",  # execute every script, not only plot_*
    "within_subsection_order": "gallery.TutorialOrder",
    "reset_argv": "gallery.tutorial_argv",
    "abort_on_example_error": False,  # report every broken tutorial, then fail
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    # Its timing pages load jQuery and DataTables from CDNs: JavaScript errors
    # offline. The build log prints the times.
    "write_computation_times": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bolt_pco64 {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False


def _drop_builtin_type_docstrings(
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """Module-level data without a ``#:`` comment would show its type's
    docstring (``dict``'s, ``tuple``'s), which is not about the name."""
    if what not in ("data", "attribute") or type(obj).__module__ != "builtins":
        return
    own = inspect.getdoc(type(obj)) or ""
    if lines and own and own.splitlines()[0].strip() == lines[0].strip():
        lines.clear()


def _prepare_results_page(app: Sphinx, docname: str, source: list[str]) -> None:
    """A page under ``results/`` as a code host would show it.

    A link to a folder (``[x](snapping/)``) goes to the folder's README, else
    to its first Markdown file. A Markdown file other than a README (a summary
    table a README links to, often without a heading) is an orphan page: built,
    reachable from its README, in no table of contents.
    """
    if not docname.startswith("results/"):
        return
    here = (DOCS / docname).parent

    def target(match: re.Match[str]) -> str:
        folder = here / match.group(1)
        pages = [folder / "README.md"] if (folder / "README.md").exists() else []
        pages = pages or sorted(folder.glob("*.md"))
        if not pages:
            return match.group(0)
        return f"]({match.group(1)}{pages[0].name})"

    text = re.sub(r"\]\((?!https?:)([^)#\s]+/)\)", target, source[0])
    if not docname.endswith("/README"):
        text = "---\norphan: true\n---\n" + text
    source[0] = text


def _skip_namedtuple_fields(
    app: Sphinx, what: str, name: str, obj: object, skip: bool, options: object
) -> bool | None:
    """Leave out a NamedTuple's field accessors ("Alias for field number 0"):
    the class docstring's ``Attributes:`` documents the fields, and the
    accessors' synthetic module (``namedtuple_RunKey``) has no source page."""
    if type(obj).__name__ == "_tuplegetter":
        return True
    return None


def _follow_to_defining_module(app: Sphinx, modname: str, fullname: str) -> str:
    """The module whose source a source link of ``modname.fullname`` shows:
    under a package of DOCUMENTED_AT_PACKAGE, the module that defines the
    object (or its class); elsewhere ``modname`` itself."""
    if modname not in DOCUMENTED_AT_PACKAGE:
        return modname
    top = getattr(sys.modules.get(modname), fullname.split(".")[0], None)
    defined_in = getattr(top, "__module__", None)
    if isinstance(defined_in, str) and defined_in.startswith(f"{modname}."):
        return defined_in
    return modname


def _is_private(target: str) -> bool:
    """Whether ``target`` names a private object of this package (a part
    with a leading underscore, not a dunder)."""
    parts = target.split(".")
    return parts[0] == "bolt_pco64" and any(
        p.startswith("_") and not p.endswith("__") for p in parts
    )


def _public_bases(
    app: Sphinx, name: str, obj: object, options: object, bases: list[type]
) -> None:
    """``Bases:`` lists documented classes: a private base of this package
    (``_OneSampler``) is replaced by its own bases (``OptunaMethod``)."""
    i = 0
    while i < len(bases):
        base = bases[i]
        if isinstance(base, type) and _is_private(
            f"{base.__module__}.{base.__qualname__}"
        ):
            own = vars(base).get("__orig_bases__") or base.__bases__
            bases[i : i + 1] = [b for b in own if b not in bases]
        else:
            i += 1


def _type_hint_reference(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: Element
) -> Element | None:
    """Resolve what a type hint names where Sphinx's own lookup does not.

    Only references made from a type hint (a field's type, without the
    ``refwarn`` of a docstring's role): a docstring that cites a private or
    undocumented object is still an error.

    - A private class of this package (``RunLoop``'s clock carries
      ``_Queued`` items) is never documented: its name shows as text.
    - A type alias (``TableLike``, imported for type checking only, so the
      hint stays a name) is documented as data, which the hint's ``py:class``
      lookup does not search: look again among data.
    """
    if node.get("refdomain") != "py" or "refwarn" in node.attributes:
        return None
    target = node.get("reftarget", "")
    if _is_private(target) and isinstance(contnode, TextElement):
        short = target.rpartition(".")[2]
        return type(contnode)(short, short)
    if node.get("reftype") == "class":
        domain = env.get_domain("py")
        return domain.resolve_xref(
            env, node["refdoc"], app.builder, "data", target, node, contnode
        )
    return None


def setup(app: Sphinx) -> None:
    """Write the results section from the folders of ``docs/results/``."""
    write_results_index(DOCS)
    write_public_names(DOCS)
    app.connect("autodoc-skip-member", _skip_namedtuple_fields)
    app.connect("viewcode-follow-imported", _follow_to_defining_module)
    app.connect("autodoc-process-docstring", _drop_builtin_type_docstrings)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _type_hint_reference)
    app.connect("source-read", _prepare_results_page)
