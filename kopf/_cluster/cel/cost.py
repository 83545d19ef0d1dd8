"""cel-go's static cost estimator with Kubernetes' library costs (to be completed)."""
from __future__ import annotations

from typing import Any


def estimate(checked: Any, decl: Any) -> int:
    return 0
