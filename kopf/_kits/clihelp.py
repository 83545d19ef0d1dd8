"""The `kopf` command's help as kubectl's reads: a command's options in titled groups, its examples, its notes.

`kopf run`'s groups, examples and notes are here too (`RUN_GROUPS`, `RUN_EXAMPLES`, `RUN_NOTES`).
"""
from typing import Any

import click


class GroupedCommand(click.Command):
    """A command whose `--help` reads as kubectl's: the description, examples, the options in titled groups
    (by the parameters' names; the rest under "Other options"), then notes (e.g. what has no options)."""

    def __init__(self, *args: Any, groups: tuple[tuple[str, tuple[str, ...]], ...] = (), examples: str = '',
                 notes: tuple[tuple[str, str], ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.groups, self.examples, self.notes = groups, examples, notes

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        if self.examples:
            with formatter.section('Examples'):
                for line in self.examples.strip().splitlines():
                    formatter.write(' ' * formatter.current_indent + line.strip() + '\n')

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {param.name: record for param in self.get_params(ctx) if isinstance(param, click.Option)
                   if (record := param.get_help_record(ctx)) is not None}
        width = min(30, max((len(term) for term, _ in records.values()), default=0))  # one column for all groups
        for title, names in (*self.groups, ('Other options', tuple(records))):
            rows = [(term.ljust(width), text) for name in names if name in records
                    for term, text in [records.pop(name)]]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for title, text in self.notes:
            with formatter.section(title):
                formatter.write_text(text)
        super().format_epilog(ctx, formatter)


RUN_GROUPS = (
    ('Handlers and scope', ('modules', 'namespaces', 'clusterwide', 'install_crds')),
    ('Peering and leases', ('standalone', 'dev', 'peering_name', 'priority', 'lease_name', 'lease_namespace',
                            'shards')),
    ('Probes and metrics', ('liveness_endpoint', 'metrics_endpoint')),
    ('Logging', ('verbose', 'debug', 'quiet', 'log_format', 'log_refkey', 'log_prefix')),
    ('Local cluster (instead of a real one)', ('local_cluster', 'apply', 'state', 'kubeconfig', 'tls_sans',
                                               'git_version', 'feature_gates')),
    ('Event loop', ('uvloop',)),
)
RUN_EXAMPLES = """
    # The handlers in handlers.py, for one namespace of the current kubeconfig context
    kopf run handlers.py -n default
    # The whole cluster, with a liveness probe and Prometheus metrics
    kopf run handlers.py -A -L http://0.0.0.0:8080/healthz --metrics 0.0.0.0:9090
    # One of several replicas: only the holder of the Lease acts
    kopf run -m my_operator.handlers -A --lease my-operator
    # On an in-memory local cluster, with a CRD applied, for development
    kopf run handlers.py -A --local-cluster --apply crd.yaml --kubeconfig local.kubeconfig
"""
RUN_NOTES = (
    ('Connection', 'As kubectl connects: $KUBECONFIG (else ~/.kube/config) and its current context, or the '
                   'pod\'s service account in a cluster; @kopf.on.login() handlers replace that (docs/api-client.md). '
                   'With --local-cluster: the local cluster.'),
    ('Webhooks', 'Admission webhooks are served when settings.admission.server is set in a startup handler, '
                 'e.g. kopf.WebhookServer() (docs/admission.md).'),
    ('Environment', 'KOPF_RUN_NAMESPACE (added to -n), KOPF_RUN_PEERING, KOPF_RUN_LEASE, KOPF_RUN_LEASE_NAMESPACE, '
                    'KOPF_RUN_SHARDS; the other options by their names, e.g. KOPF_RUN_LOG_FORMAT=json, '
                    'KOPF_RUN_LIVENESS_ENDPOINT, KOPF_RUN_METRICS_ENDPOINT.'),
)
