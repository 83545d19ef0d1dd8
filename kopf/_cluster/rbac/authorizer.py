"""The authorizer of the local cluster: `forbid()` rules, then `system:masters`, then RBAC — as a union.

As kube-apiserver with `--authorization-mode=RBAC`: the privileged group is allowed everything;
RBAC allows what a bound rule allows (its reason names the binding), and otherwise has no opinion
(its reason then lists the references to missing roles). Before both, the emulator's `forbid()`
rules deny. `decide()` is the pure function; an `Authorizer` keeps the `Policy` of a store (rebuilt
after any change to an RBAC object) and remembers recent decisions.

    decide(policy, denials, attributes) -> Decision
    authorizer.authorize(attributes) -> Decision       # for the HTTP layer and for CEL's `authorizer`
    authorizer.allows(user, verb, group, resource, ...) -> bool
"""
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from kopf._cluster.rbac import forbidding, policyrules, resolver
from kopf._cluster.rbac.forbidding import Denial
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.resolver import Policy
from kopf._cluster.rbac.subjects import User

CACHED = 10000


@dataclasses.dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ''
    denied: bool = False      # an explicit denial (a forbid() rule), not just "no rule allows it"


ALLOWED = Decision(True)


def decide(policy: Policy, denials: Sequence[Denial], attributes: Attributes) -> Decision:
    if denials and any(denial.matches(attributes) for denial in denials):
        return Decision(False, forbidding.REASON, denied=True)
    if attributes.user.privileged:
        return ALLOWED
    errors: list[str] = []
    for source, rule, error in resolver.visit(policy, attributes.user, attributes.namespace):
        if rule is not None and policyrules.allows(attributes, rule):
            return Decision(True, f'RBAC: allowed by {source}')
        if error is not None:
            errors.append(error)
    return Decision(False, f'RBAC: {resolver.aggregate(errors)}' if errors else '')


def rules_for(policy: Policy, user: User, namespace: str, *, registry: bool = False) -> tuple[list[Any], list[str]]:
    """RulesFor: every rule that applies to the user in the namespace, and the errors met resolving them."""
    rules: list[Any] = []
    errors: list[str] = []
    for _, rule, error in resolver.visit(policy, user, namespace, registry=registry):
        if rule is not None:
            rules.append(rule)
        if error is not None:
            errors.append(error)
    return rules, errors


class Authorizer:
    """The policy of one store, rebuilt lazily after changes; the `forbid()` rules; recent decisions."""

    def __init__(self, objects: Callable[[tuple[str, str]], Iterable[Mapping[str, Any]]]) -> None:
        self._objects = objects
        self.denials: list[Denial] = []
        self._policy: Policy | None = None
        self._decisions: dict[Attributes, Decision] = {}
        self._denials_seen: tuple[Denial, ...] = ()

    def invalidate(self) -> None:
        """After a change of any RBAC object (or of the whole store)."""
        self._policy = None
        self._decisions.clear()

    def follow(self, key: tuple[str, str]) -> None:
        if key in resolver.KEYS:
            self.invalidate()

    @property
    def policy(self) -> Policy:
        if self._policy is None:
            self._policy = Policy.of({key: list(self._objects(key)) for key in resolver.KEYS})
        return self._policy

    def authorize(self, attributes: Attributes) -> Decision:
        denials = tuple(self.denials)
        if denials != self._denials_seen:
            self._decisions.clear()
            self._denials_seen = denials
        decision = self._decisions.get(attributes)
        if decision is None:
            if len(self._decisions) >= CACHED:
                self._decisions.clear()
            decision = self._decisions[attributes] = decide(self.policy, denials, attributes)
        return decision

    def allows(self, user: User, verb: str, group: str = '', resource: str = '', subresource: str = '',
               namespace: str = '', name: str = '', *, path: str = '') -> bool:
        """May `user` do `verb` on the resource (or, with `path`, on a non-resource URL)? (CEL's `authorizer`)"""
        if path:
            return self.authorize(Attributes(user, verb, resource_request=False, path=path)).allowed
        return self.authorize(Attributes(user, verb, True, group, '*', resource, subresource, namespace, name)).allowed

    def rules_for(self, user: User, namespace: str, *, registry: bool = False) -> tuple[list[Any], list[str]]:
        return rules_for(self.policy, user, namespace, registry=registry)

    def visible_denials(self, user: User) -> Iterator[Denial]:
        return (denial for denial in self.denials if denial.applies_to(user.name))
