"""RBAC as kube-apiserver enforces it: who a request is from, what it asks, and whether a policy allows it.

Pure evaluation (no I/O, no HTTP): the web layer (`web.accessrules`) and the pipeline call it.

    subjects      users, groups, ServiceAccount user names (`system:serviceaccount:<ns>:<name>`)
    requestinfo   a URL as an authorizer sees it: verb, group, resource, subresource, namespace, name, or a path
    policyrules   PolicyRules: whether one allows a request; whether rules cover others (escalation); their texts
    resolver      the rules that apply to a user in a namespace: bindings by subject, roles by reference
    forbidding    the emulator's `forbid()` rules: explicit denials before anything else
    authorizer    the union: `forbid()`, `system:masters`, RBAC — decisions with the real server's reasons
    refusals      the 403 answers of authorization, word for word
    escalation    writes of roles and bindings: no granting of permissions one does not hold (or `escalate`/`bind`)
    aggregation   ClusterRoles with an `aggregationRule`: their rules from the ClusterRoles they select
    bootstrap     the bootstrap policy a real server creates at its start (cluster-admin, admin/edit/view, system:*)
    satokens      ServiceAccount tokens (JWTs): their claims, issuing, checking, and the user they stand for
    validating    the validation and defaults of the four RBAC kinds (names, rules, roleRef, subjects)
    data          package data: the bootstrap policy (generated from k8s.io/kubernetes's fixtures)

The question CEL's `authorizer` asks, and any other caller: `state.authorizer.allows(user, verb, group,
resource, subresource, namespace, name)` (or `.authorize(Attributes(...))` for the decision and reason).
"""
