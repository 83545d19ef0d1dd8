"""Kubernetes' authorizer library (`authorizer.group('apps').resource('deployments').check('create')`).

The values carry an `Authorize` callable, the emulator's answer to "may this user do this": the
admission glue passes it in (`kopf._cluster.admitting.policies.authorize`), so the library has no idea of
how access is decided. `Attributes` are the authorizer's request attributes.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celvalues import register_type
from kopf._cluster.cel.decls import Env, Overload

B, S = celtypes.BoolType, celtypes.StringType
AuthorizerType = celtypes.object_type('kubernetes.authorization.Authorizer', {})
PathCheckType = celtypes.object_type('kubernetes.authorization.PathCheck', {})
GroupCheckType = celtypes.object_type('kubernetes.authorization.GroupCheck', {})
ResourceCheckType = celtypes.object_type('kubernetes.authorization.ResourceCheck', {})
DecisionType = celtypes.object_type('kubernetes.authorization.Decision', {})


@dataclasses.dataclass(frozen=True)
class Attributes:
    user: str
    groups: tuple[str, ...]
    verb: str
    path: str = ''
    resource_request: bool = False
    group: str = ''
    resource: str = ''
    subresource: str = ''
    namespace: str = ''
    name: str = ''
    field_selector: str = ''
    label_selector: str = ''


#: (attributes) -> (decision: 'allow' | 'deny' | 'noopinion', reason, error text or '').
Authorize = Callable[[Attributes], tuple[str, str, str]]


@dataclasses.dataclass(frozen=True)
class Authorizer:
    user: str
    groups: tuple[str, ...]
    authorize: Authorize


@dataclasses.dataclass(frozen=True)
class PathCheck:
    authorizer: Authorizer
    path: str


@dataclasses.dataclass(frozen=True)
class GroupCheck:
    authorizer: Authorizer
    group: str


@dataclasses.dataclass(frozen=True)
class ResourceCheck:
    authorizer: Authorizer
    group: str
    resource: str
    subresource: str = ''
    namespace: str = ''
    name: str = ''
    field_selector: str = ''
    label_selector: str = ''


@dataclasses.dataclass(frozen=True)
class Decision:
    decision: str
    reason: str
    error: str


def service_account(a: Authorizer, namespace: str, name: str) -> Authorizer:
    groups = ('system:serviceaccounts', f'system:serviceaccounts:{namespace}', 'system:authenticated')
    return Authorizer(f'system:serviceaccount:{namespace}:{name}', groups, a.authorize)


def check(target: Any, verb: str) -> Decision:
    if isinstance(target, PathCheck):
        a = target.authorizer
        attributes = Attributes(a.user, a.groups, verb, path=target.path)
    else:
        a = target.authorizer
        attributes = Attributes(a.user, a.groups, verb, resource_request=True, group=target.group,
                                resource=target.resource, subresource=target.subresource,
                                namespace=target.namespace, name=target.name,
                                field_selector=target.field_selector, label_selector=target.label_selector)
    decision, reason, error = a.authorize(attributes)
    return Decision(decision, reason, error)


def request_resource(a: Authorizer, group: str, resource: str, subresource: str, namespace: str,
                     name: str) -> ResourceCheck:
    """`authorizer.requestResource`: a check preset to the request's resource."""
    return ResourceCheck(a, group, resource, subresource, namespace, name)


def declare(env: Env) -> None:
    for cls, t in ((Authorizer, AuthorizerType), (PathCheck, PathCheckType), (GroupCheck, GroupCheckType),
                   (ResourceCheck, ResourceCheckType), (Decision, DecisionType)):
        register_type(cls, t)
    f = env.add_function
    m = {'member': True}
    R = ResourceCheckType
    f('path', Overload('authorizer_path', [AuthorizerType, S], PathCheckType, PathCheck, **m))
    f('group', Overload('authorizer_group', [AuthorizerType, S], GroupCheckType, GroupCheck, **m))
    f('serviceAccount', Overload('authorizer_serviceaccount', [AuthorizerType, S, S], AuthorizerType,
                                 service_account, **m))
    f('resource', Overload('groupcheck_resource', [GroupCheckType, S], R,
                           lambda g, r: ResourceCheck(g.authorizer, g.group, r), **m))
    f('subresource', Overload('resourcecheck_subresource', [R, S], R,
                              lambda c, v: dataclasses.replace(c, subresource=v), **m))
    f('namespace', Overload('resourcecheck_namespace', [R, S], R,
                            lambda c, v: dataclasses.replace(c, namespace=v), **m))
    f('name', Overload('resourcecheck_name', [R, S], R, lambda c, v: dataclasses.replace(c, name=v), **m))
    f('check', Overload('pathcheck_check', [PathCheckType, S], DecisionType, check, **m),
      Overload('resourcecheck_check', [R, S], DecisionType, check, **m))
    f('errored', Overload('decision_errored', [DecisionType], B, lambda d: bool(d.error), **m))
    f('error', Overload('decision_error', [DecisionType], S, lambda d: d.error, **m))
    f('allowed', Overload('decision_allowed', [DecisionType], B, lambda d: d.decision == 'allow', **m))
    f('reason', Overload('decision_reason', [DecisionType], S, lambda d: d.reason, **m))
    f('fieldSelector', Overload('authorizer_fieldselector', [R, S], R,
                                lambda c, v: dataclasses.replace(c, field_selector=v), **m))
    f('labelSelector', Overload('authorizer_labelselector', [R, S], R,
                                lambda c, v: dataclasses.replace(c, label_selector=v), **m))
