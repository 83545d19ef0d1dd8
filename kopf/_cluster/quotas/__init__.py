"""ResourceQuota: what objects cost, the admission check of a write, and the usage a quota's status shows.

    quantities  Kubernetes quantities (`500m`, `64Mi`): parsed exactly, added, compared, written canonically
    evaluators  what an object costs: object counts, Pods' compute resources, Services, claims; quota scopes
    charging    the admission check: a write charged to its namespace's quotas, or refused with the real 403
    tally       a quota's status as the resourcequota controller computes it

Pure (no I/O): the pipeline charges writes and stores the new usage; a controller keeps the status.
"""
