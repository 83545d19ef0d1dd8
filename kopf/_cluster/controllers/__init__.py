"""The controllers every operator relies on, run by the emulator itself.

    sweeping          namespace cleanup, CRD cleanup, garbage collection (background by ownerReferences; foreground
                      and orphan deletion by their finalizers), event expiry; `Sweeper`: the task that runs a sweep
                      when woken (after deletions) and every second, and the workload controllers when they are due
    workloads         the workload controllers at work: what changed, what is due, their plans written
    clock             the one clock the workload controllers read (wall time plus what tests advance)
    writeplans        what a workload controller decides (writes and a wake-up time), as values; shared small rules
    knobs             how simulated Pods behave: emulator-wide settings and per-object annotations
    podstates         what controllers read from a Pod: active, ready, available, finished
    seeding           fake Ready nodes, the `kubernetes` Service, each namespace's ServiceAccount and root CA
    kubelet           the fake scheduler and kubelet: Pods bound, Pending, Running and Ready, failing on demand
    replicasets       ReplicaSets and ReplicationControllers: Pods created and deleted to `spec.replicas`, their counts
    deployments       Deployments: ReplicaSets per template, rolling updates, revisions, status, conditions
    statefulsets      StatefulSets: Pods `<set>-0..N-1` created, removed and updated in order
    daemonsets        DaemonSets: a Pod per fitting node
    jobs              Jobs: Pods to `completions` within `parallelism` and `backoffLimit`, their conditions
    cronjobs          CronJobs: a Job per scheduled time (standard cron), concurrency policy, history limits
    serviceendpoints  Services with a selector: their Endpoints and EndpointSlice of the selected Pods
    rolesync          ClusterRole aggregation (the clusterrole-aggregation controller), by server-side apply
    quotasync         ResourceQuotas' status: their hard limits and their namespaces' usage (the resourcequota
                      controller)

A sweep is synchronous and idempotent; it writes only through the write pipeline (`pipeline.writing`).
The workload controllers are pure functions to plans (table-tested); only `workloads` writes them.
"""
