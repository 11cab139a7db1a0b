import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent.parent / "bench"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
