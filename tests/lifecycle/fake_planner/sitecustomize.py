"""Test seam for the detached lineage worker (only on PYTHONPATH in tests/lifecycle).

With ``PLANLINEAGE_TEST_FAKE_LINEAGE`` set to a JSON lineage document, ``planlineage.pipeline.extract``
is replaced as soon as it is imported: it waits ``PLANLINEAGE_TEST_FAKE_DELAY`` seconds (writing
``<PLANLINEAGE_TEST_FAKE_MARK>.<pid>`` first, so a test knows the compile is under way), raises
ExtractError for a script containing ``BROKEN``, and otherwise answers the document.  No JVM.
"""

import os
import sys

if os.environ.get("PLANLINEAGE_TEST_FAKE_LINEAGE"):
    import importlib.abc
    import importlib.util

    def _patch(module):
        real_error = module.ExtractError

        def fake_extract(
            script, flink_version=None, jars=None, identity=None, planner=None, timeout=300.0, columns=False
        ):
            import time

            from planlineage.document import JobLineage

            mark = os.environ.get("PLANLINEAGE_TEST_FAKE_MARK")
            if mark:
                with open(f"{mark}.{os.getpid()}", "w") as handle:
                    handle.write("compiling")
            time.sleep(float(os.environ.get("PLANLINEAGE_TEST_FAKE_DELAY", "0") or 0))
            jars_log = os.environ.get("PLANLINEAGE_TEST_FAKE_JARS_LOG")
            if jars_log:  # which jars the compile was given, one JSON list per job
                import json

                with open(jars_log, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(list(jars or [])) + "\n")
            for jar in jars or []:
                if not os.path.isfile(jar):
                    raise real_error(f"jar {jar} does not exist: pass the path of a readable jar file with --jar.")
            if "BROKEN" in script:
                raise real_error("statement 1 (line 1): SQL parse failed")
            with open(os.environ["PLANLINEAGE_TEST_FAKE_LINEAGE"], encoding="utf-8") as handle:
                return JobLineage.model_validate_json(handle.read())

        module.extract = fake_extract

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "planlineage.pipeline":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            original = spec.loader.exec_module

            def exec_module(module):
                original(module)
                _patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Finder())
