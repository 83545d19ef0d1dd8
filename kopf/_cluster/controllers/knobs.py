"""How the simulated workloads behave: emulator-wide settings (the control API) and per-object annotations.

Annotations on a Pod (or on the pod template of a Deployment, ReplicaSet or Job, so they reach its Pods):

    emulator.kopf.dev/start-delay: "2.5"     seconds from scheduling until the containers run (default 0.05)
    emulator.kopf.dev/image-pull: "fail"      ErrImagePull, then ImagePullBackOff; the Pod stays Pending
    emulator.kopf.dev/crash-loop: "true"      Running, but the containers crash: CrashLoopBackOff, restarts
    emulator.kopf.dev/run-seconds: "1"        a Pod that does not restart (Never/OnFailure) finishes after this
    emulator.kopf.dev/exit-code: "1"          ... with this exit code (0: Succeeded, else Failed)

A Job's Pods finish after `run_seconds` (0.05) unless these say otherwise; a Pod of no Job that does not
restart runs until it is deleted (as a real process would, for all the kubelet knows), unless one of them
is set: then it finishes too (after `run-seconds`, or the emulator-wide `run_seconds`).

On a Job: `emulator.kopf.dev/fail-pods: "N"`: its first N pods fail (exit code 1), the later ones succeed.
"""
import dataclasses
import fnmatch
from typing import Any

PREFIX = 'emulator.kopf.dev/'
START_DELAY = PREFIX + 'start-delay'
IMAGE_PULL = PREFIX + 'image-pull'
CRASH_LOOP = PREFIX + 'crash-loop'
RUN_SECONDS = PREFIX + 'run-seconds'
EXIT_CODE = PREFIX + 'exit-code'
FAIL_PODS = PREFIX + 'fail-pods'


@dataclasses.dataclass
class Knobs:
    """The emulator-wide behaviour of simulated workloads (`LocalCluster.set_workloads(...)`)."""

    start_delay: float = 0.05
    run_seconds: float = 0.05
    failing_images: list[str] = dataclasses.field(default_factory=list)   # globs: pulls fail
    crashing_images: list[str] = dataclasses.field(default_factory=list)  # globs: containers crash


@dataclasses.dataclass(frozen=True)
class PodBehaviour:
    start_delay: float
    pull_fails: bool
    crashes: bool
    run_seconds: float | None   # None: it runs until deleted (a Pod of no Job, no annotation)
    exit_code: int


def _number(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if number >= 0 else default


def _flag(value: Any) -> bool:
    return str(value).lower() in ('true', 'fail', 'yes', '1')


def _matches(images: list[str], patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(image, pattern) for image in images for pattern in patterns)


def of_job(pod: dict[str, Any]) -> bool:
    """Whether a Job controls the Pod (a controller ownerReference of kind Job in batch)."""
    return any(isinstance(ref, dict) and ref.get('controller') and ref.get('kind') == 'Job'
               and str(ref.get('apiVersion', '')).startswith('batch/')
               for ref in pod['metadata'].get('ownerReferences') or [])


def pod_behaviour(pod: dict[str, Any], knobs: Knobs) -> PodBehaviour:
    annotations = pod['metadata'].get('annotations') or {}
    finishes = of_job(pod) or RUN_SECONDS in annotations or EXIT_CODE in annotations
    images = [str(c.get('image') or '') for c in (pod.get('spec') or {}).get('containers') or []]
    try:
        exit_code = int(annotations.get(EXIT_CODE, 0))
    except (TypeError, ValueError):
        exit_code = 1
    return PodBehaviour(
        start_delay=_number(annotations.get(START_DELAY), knobs.start_delay),
        pull_fails=_flag(annotations.get(IMAGE_PULL, '')) or _matches(images, knobs.failing_images),
        crashes=_flag(annotations.get(CRASH_LOOP, '')) or _matches(images, knobs.crashing_images),
        run_seconds=_number(annotations.get(RUN_SECONDS), knobs.run_seconds) if finishes else None,
        exit_code=exit_code,
    )


def failing_pods(job: dict[str, Any]) -> int:
    return int(_number((job['metadata'].get('annotations') or {}).get(FAIL_PODS), 0))
