"""The write pipeline: what a create, replace, patch, apply or delete does to the state, and what follows.

    state           the whole state: the store, the catalog kept in sync with stored CRDs, deleted owners,
                    field managers; snapshots for `--state`
    writing         create / replace / patch / delete: server-set metadata, scope, status split, finalizers,
                    preconditions, no-op writes
    writeguards     what a write goes through besides its kind's rules: RBAC escalation checks, the ResourceQuota
                    admission check, `metadata.managedFields`
    tokenrequests   TokenRequest (`serviceaccounts/<name>/token`): ServiceAccount tokens issued, and checked
    serverside      server-side apply (`application/apply-patch+yaml`) as a write: create or merge, conflicts, force
    scaling         the `scale` subresource: an `autoscaling/v1 Scale` view of an object's replica counts
    podactions      `pods/binding` (and `bindings`), `pods/eviction`: what they do to the stored Pod
    metadata        server-side metadata rules: names, generated names, timestamps, the ObjectMeta field set
    crds            CRD acceptance, defaults, status conditions, and the resources a CRD serves
    kindrules       the few per-kind rules on top of the generic pipeline (events, namespaces, leases, ...)
    kind_defaults   the server-side defaults of built-in kinds that clients read back (Jobs, Services, ...)
    webhookconfigs  validation and defaults of admission webhook configurations (a per-kind rule)
    policyconfigs   validation of ValidatingAdmissionPolicies (their CEL) and their bindings (a per-kind rule)

Synchronous and free of I/O: functions take the state and decoded inputs and return an `Outcome`;
stored objects are never mutated (every write builds a fresh dict: the watch history shares them).
"""
