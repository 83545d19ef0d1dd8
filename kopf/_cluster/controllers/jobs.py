"""The Job controller: Pods until `completions` succeed, at most `parallelism` at once, `backoffLimit` failures.

`reconcile(job, pods, now)` gets the Job's own Pods and plans the Pods to create (`<job>-xxxxx`, with the
Job's generated labels; the first `fail-pods` of them fail, see `knobs`) and its status as since 1.31:
`startTime`, `active`, `ready`, `succeeded`, `failed`, `terminating`; on success the conditions
SuccessCriteriaMet then Complete and `completionTime`; past the back-off limit FailureTarget then Failed
(BackoffLimitExceeded), with the active Pods deleted. A `suspend`ed Job has no Pods.
"""
import copy

from kopf._cluster.controllers import clock, knobs, podstates
from kopf._cluster.controllers.replicasets import pod_from_template
from kopf._cluster.controllers.writeplans import JOBS, PODS, Create, Delete, Obj, Plan, condition, count, without_zeros

FINISHED = ('Complete', 'Failed')


def _finished(job: Obj) -> bool:
    return any(c.get('type') in FINISHED and c.get('status') == 'True'
               for c in (job.get('status') or {}).get('conditions') or [])


def reconcile(job: Obj, pods: list[Obj], now: float) -> Plan:
    plan = Plan()
    if job['metadata'].get('deletionTimestamp') or _finished(job):
        return plan
    spec = job.get('spec') or {}
    completions = int(spec['completions']) if spec.get('completions') is not None else None
    parallelism = count(spec.get('parallelism'), 1)
    backoff_limit = count(spec.get('backoffLimit'), 6)
    active = [pod for pod in pods if podstates.active(pod)]
    succeeded = sum(1 for pod in pods if podstates.phase(pod) == 'Succeeded')
    failed = sum(1 for pod in pods if podstates.phase(pod) == 'Failed')
    old = job.get('status') or {}
    status: Obj = {'startTime': old.get('startTime') or clock.stamp(now)}
    stamp = clock.stamp(now)
    conditions = list(old.get('conditions') or [])
    if completions is not None:
        done = succeeded >= completions
    else:   # a work queue: done when one has succeeded and none is left running
        done = succeeded > 0 and not active
    if failed > backoff_limit:
        for pod in active:
            plan.writes.append(Delete(PODS, pod))
        active = []
        message = 'Job has reached the specified backoff limit'
        conditions = [condition(conditions, 'FailureTarget', 'True', 'BackoffLimitExceeded', message, stamp,
                                probe_time=True),
                      condition(conditions, 'Failed', 'True', 'BackoffLimitExceeded', message, stamp, probe_time=True)]
    elif done:
        message = 'Reached expected number of completions'
        conditions = [condition(conditions, 'SuccessCriteriaMet', 'True', 'CompletionsReached', message, stamp,
                                probe_time=True),
                      condition(conditions, 'Complete', 'True', 'CompletionsReached', message, stamp, probe_time=True)]
        status['completionTime'] = stamp
    elif not spec.get('suspend'):
        remaining = (completions - succeeded if completions is not None else parallelism) - len(active)
        _create_pods(plan, job, max(0, min(parallelism - len(active), remaining)), existing=len(pods))
    status.update(active=len(active), ready=sum(1 for pod in active if podstates.ready(pod)),
                  succeeded=succeeded, failed=failed, terminating=0)
    if conditions:
        status['conditions'] = conditions
    status = without_zeros(status, 'ready', 'terminating')
    status['uncountedTerminatedPods'] = {}
    plan.update(JOBS, job, {**job, 'status': status})
    return plan


def _create_pods(plan: Plan, job: Obj, wanted: int, *, existing: int) -> None:
    """The Job's next Pods (`<job>-xxxxx`); of all its Pods, the first `fail-pods` (`knobs`) fail."""
    fail_first = knobs.failing_pods(job)
    template = (job.get('spec') or {}).get('template') or {}
    for index in range(wanted):
        pod = pod_from_template(job, template, f'{job["metadata"]["name"]}-')
        if existing + index < fail_first:
            pod['metadata'].setdefault('annotations', {})[knobs.EXIT_CODE] = '1'
        pod['spec'] = copy.deepcopy(pod['spec'])
        plan.writes.append(Create(PODS, pod))
