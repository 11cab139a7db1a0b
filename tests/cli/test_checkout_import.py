"""`python -m planlineage` run from the checkout's root imports the checkout's `planlineage/`
folder (the working directory comes first on sys.path); its subpackages must still be found."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_works_from_the_checkout_root():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "planlineage",
            "identity",
            '{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "k1:9092"}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert '"namespace": "kafka://k1:9092"' in result.stdout


def test_the_checkout_maps_every_folder_setup_py_names():
    code = (
        "import planlineage.cli.main, planlineage.planner.walk, planlineage.flink_versions, "
        "planlineage.lifecycle.runs, planlineage.emitter.outbox; "
        "print(planlineage.flink_versions.__file__)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).parent == ROOT / "flink-versions"
