"""The known differences of the local cluster from kube-apiserver 1.34: what, why, since when.

Each entry names the answer fields (flattened paths, shell patterns) that may differ in the steps
that cite it; docs/local-cluster.md's table is generated from this list (`render()`), and a test
fails if the two drift apart or if an entry is cited by no step that differs.
"""
import dataclasses
import re

BEGIN = '<!-- known-differences: generated from tests/fidelity/differential/known.py; do not edit -->'
END = '<!-- /known-differences -->'


FIRST = 'the first emulator (found by the differential suite)'


@dataclasses.dataclass(frozen=True)
class Known:
    what: str
    why: str
    fields: tuple[str, ...]
    since: str = FIRST


FURNITURE = Known(
    what="each namespace's `kube-root-ca.crt` ConfigMap holds another CA and comes at another moment "
         '(the suite leaves it out of lists, watches and admission reviews)',
    why="each cluster has its own CA, and its controllers write the furniture at their own pace",
    fields=())
#: Normalized away in every answer (compare.py), listed in the table all the same.
EVERYWHERE = [FURNITURE]

KNOWN: dict[str, Known] = {
    'column-descriptions': Known(
        what="Tables' column descriptions are one sentence (a real server: the field's whole OpenAPI description)",
        why='kubectl shows neither; the whole descriptions would double the size of every Table',
        fields=('body.columnDefinitions.*.description',)),
    'column-types': Known(
        what="a ConfigMap Table's `Data` column is an integer (a real server: a string)",
        why='it is a count; kubectl prints both the same',
        fields=('body.columnDefinitions.*.type',)),
    'pod-admission': Known(
        what="a Pod gets none of the admission plugins' additions: the `default` ServiceAccount and its token "
             'volume, the default tolerations, the priority',
        why='no admission plugins run but the webhooks; operators do not read these fields back',
        fields=('*spec.serviceAccount', '*spec.serviceAccountName', '*spec.containers.*.volumeMounts*',
                '*spec.volumes*', '*spec.tolerations*', '*spec.priority', '*spec.preemptionPolicy',
                '*spec.enableServiceLinks', '*spec.schedulerName')),
    'event-nulls': Known(
        what="a core/v1 Event's unset `eventTime`, `firstTimestamp` and `lastTimestamp` are absent (a server: null)",
        why='the emulator stores no nulls; clients read both as unset',
        fields=('body.eventTime', 'body.firstTimestamp', 'body.lastTimestamp')),
    'no-controllers': Known(
        what="a Deployment's status and revision annotation (and the controller's `managedFields` entry), as the "
             'controllers left them when the answer was made',
        why="both sides' controllers act a moment after each write, and envtest's Pods never run (no kubelet)",
        fields=('body.status*', 'body.metadata.annotations.deployment.kubernetes.io/revision',
                'body.rows.*.object.metadata.annotations.deployment.kubernetes.io/revision', 'body.rows.*.cells.*',
                'body.rows.*.object.metadata.managedFields*',
                'body.apiVersion', 'body.kind', 'body.metadata*', 'body.spec*', 'code', 'status.*')),
    'status-500': Known(
        what='a resourceVersion that is not a number, or an undecodable DeleteOptions body, is a 400 or 409 '
             '(a real server: a 500 from parsing it)',
        why='a 500 says the server is broken; the emulator answers what the client did wrong',
        fields=('code', 'status.*')),
    'version': Known(
        what='`/version` says the version the kinds were taken from, v1.34.4 (a real server: its own version)',
        why='one version everywhere: `/version`, the schemas, the envtest binaries; differs only with other binaries',
        fields=('body.gitVersion', 'body.minor')),
    'text-404': Known(
        what='an unknown group or version is a JSON `Status` 404 (a real server: a text/plain `404 page not found`)',
        why='clients treat both as 404; a Status names the path in its message, which helps more',
        fields=('*',)),
}


@dataclasses.dataclass(frozen=True)
class BytesKnown:
    """Why the bytes of answers may differ when their values are the same (field order, formatting...)."""
    what: str
    why: str
    pattern: str = ''   # a regular expression both normalized texts must contain where they differ
    since: str = 'the byte comparison of the differential suite'

    def matches(self, ours: str, theirs: str) -> bool:
        return bool(self.pattern) and bool(re.search(self.pattern, ours)) and bool(re.search(self.pattern, theirs))


#: Byte-level differences of answers whose values agree. `message` is cited by the harness itself: an
#: answer whose message differs (listed by the suite among the messages differing) differs in bytes too.
BYTES_KNOWN: dict[str, BytesKnown] = {
    'message': BytesKnown(
        what='bytes: an answer whose message text differs (the suite lists each one as a message differing) '
             'differs in those bytes only',
        why='messages are compared loosely: the same reason, code and causes, in other words where a text '
            "names Go's internals (`strconv.ParseInt: ...`) or a value (a uid, a resourceVersion) of its own"),
}


def render() -> str:
    rows = [f'| {k.what} | {k.why} | {k.since} |' for k in [*EVERYWHERE, *KNOWN.values(), *BYTES_KNOWN.values()]]
    return '\n'.join([BEGIN, '| What | Why | Since |', '|---|---|---|', *rows, END])


if __name__ == '__main__':  # rewrite docs/local-cluster.md's table from this list
    import pathlib
    docs = pathlib.Path(__file__).parents[3] / 'docs' / 'local-cluster.md'
    text = docs.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    docs.write_text(text[:start] + render() + text[end:])
