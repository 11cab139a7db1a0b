"""planlineage: OpenLineage for Flink SQL and Spark jobs submitted through a platform."""

__version__ = "0.1.0"


def _map_checkout_folders() -> None:
    """Make this folder of a source checkout behave like the installed package.

    Installed, setup.py maps the checkout's sibling folders (cli/, planner/, flink-versions/, ...)
    into this package. When this folder itself is imported instead (``python -m planlineage``
    run from the checkout's root puts the working directory first on sys.path), the same
    mapping is applied here, read from setup.py, so that the command works from anywhere.
    """
    import os
    import sys

    # os.path, not pathlib: this runs on every command (submit included) and an installed copy
    # returns here; pathlib alone would be a third of submit's own start-up.
    folder = os.path.dirname(os.path.realpath(__file__))
    if os.path.isdir(os.path.join(folder, "cli")) or not os.path.isfile(os.path.join(folder, "..", "setup.py")):
        return  # installed (the subpackages are inside), or not a checkout
    for finder in sys.meta_path:  # an editable install's finder already maps them: nothing to parse
        if getattr(finder, "__module__", "").startswith("_frozen_importlib") or not hasattr(finder, "find_spec"):
            continue  # Python's own finders search sys.path, where a checkout's cli/ is not ours
        try:
            if finder.find_spec(f"{__name__}.cli", None) is not None:
                return
        except Exception:  # a finder that cannot answer for this name does not map it
            continue
    import ast
    import importlib.abc
    import importlib.util
    from pathlib import Path

    here = Path(folder)
    setup = here.parent / "setup.py"

    folders: dict[str, Path] = {}
    for node in ast.walk(ast.parse(setup.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            folders = {name: here.parent / folder for name, folder in ast.literal_eval(node.value).items()}

    class CheckoutFolders(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            folder = folders.get(fullname)
            if folder is None or fullname == __name__:
                return None
            return importlib.util.spec_from_file_location(
                fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )

    sys.meta_path.insert(0, CheckoutFolders())


_map_checkout_folders()
