"""Shared test set-up: the repository root on sys.path (pages import `ui` and `gemmlib`)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
