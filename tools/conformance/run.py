"""`make conformance`: Kubernetes' own `[sig-api-machinery] [Conformance]` specs against envtest and the local cluster.

    python tools/conformance/run.py [--backend envtest|local|both] [--focus REGEX] [--report DIR]

e2e.test (tools/conformance/build.sh: k8s.io/kubernetes/test/e2e at the envtest version, the apimachinery
suite only) runs the specs against a real kube-apiserver + kube-controller-manager (envtest: no nodes, so
`--allowed-not-ready-nodes=-1 --num-nodes=0`) and against a `LocalCluster`, one spec after another. The
specs that need a running Pod (a webhook server, a conversion webhook, an aggregated API server, a Pod
that must reach Running) are listed with the reason and run on neither: envtest has no kubelet, and the
local cluster's simulated Pods run no process. It prints each spec's outcome on both, then

    passed on envtest: N, passed on the local cluster: M, need a pod: K

and writes the ginkgo JSON reports and that summary (`summary.json`) into the report directory.
Not run in CI: it takes a Go build of e2e.test (cached beside the envtest binaries) and ~15 minutes a side.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
FOCUS = r'\[sig-api-machinery\].*\[Conformance\]'
#: The specs that need a running Pod (a process in a container), by a pattern of their full text: why.
NEED_A_POD = {
    r'AdmissionWebhook': 'deploys the sample webhook server (agnhost) as a Deployment and calls it through a Service',
    r'CustomResourceConversionWebhook': 'deploys the CRD conversion webhook (agnhost) as a Deployment',
    r'CustomResourceFieldSelectors': 'deploys the CRD conversion webhook (agnhost) as a Deployment',
    r'Aggregator': 'deploys the sample-apiserver as a Deployment behind an APIService, and calls it',
    r'Namespaces .*should ensure that all pods are removed': 'waits for its Pod to be Running (a kubelet)',
    r'OrderedNamespaceDeletion': 'waits for its Pod to be Running (a kubelet)',
    r'Garbage collector .*(should orphan pods created by rc|should keep the rc around|'
    r'should not delete dependents that have both)': 'sizes its ReplicationController by the Ready, schedulable '
                                                     'Nodes (envtest registers none: no kubelet)',
}
E2E_FLAGS = ['--allowed-not-ready-nodes=-1', '--num-nodes=0', '--provider=skeleton', '--disable-log-dump',
             '--ginkgo.no-color', '--ginkgo.timeout=4h',
             '--ginkgo.poll-progress-after=240s', '--ginkgo.poll-progress-interval=120s']   # a stuck spec: where


def build(script: str) -> pathlib.Path:
    done = subprocess.run([str(ROOT / script)], stdout=subprocess.PIPE, text=True, check=True)
    return pathlib.Path(done.stdout.strip().splitlines()[-1])


def specs(e2e: pathlib.Path, focus: str, workdir: pathlib.Path) -> list[str]:
    """The full texts of the specs that `focus` selects (a ginkgo dry run)."""
    report = workdir / 'dry-run.json'
    subprocess.run([str(e2e), *E2E_FLAGS, '--ginkgo.dry-run', f'--ginkgo.focus={focus}',
                    f'--ginkgo.json-report={report}'], cwd=workdir, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return sorted(name for name, state in outcomes(report).items() if state != 'skipped')


def outcomes(report: pathlib.Path) -> dict[str, str]:
    """Spec full text -> its state (`passed`, `failed`, `skipped`, ...) from a ginkgo JSON report."""
    if not report.exists():
        return {}
    found: dict[str, str] = {}
    for suite in json.loads(report.read_text()):
        for spec in suite.get('SpecReports') or []:
            if spec.get('LeafNodeType') != 'It':
                continue
            found[full_text(spec)] = spec.get('State', '')
    return found


def failures(report: pathlib.Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for suite in json.loads(report.read_text()) if report.exists() else []:
        for spec in suite.get('SpecReports') or []:
            failure = spec.get('Failure') or {}
            if spec.get('LeafNodeType') == 'It' and failure:
                found[full_text(spec)] = str(failure.get('Message', '')).strip().splitlines()[0][:300] \
                    if failure.get('Message') else ''
    return found


def full_text(spec: dict[str, Any]) -> str:
    return ' '.join([*(spec.get('ContainerHierarchyTexts') or []), spec.get('LeafNodeText', '')])


def needs_a_pod(name: str) -> str | None:
    return next((why for pattern, why in NEED_A_POD.items() if re.search(pattern, name)), None)


def run(e2e: pathlib.Path, kubeconfig: str, focus: str, skip: str, report: pathlib.Path, log: pathlib.Path) -> None:
    kubectl = e2e.parent / 'kubectl'   # the one built with the envtest binaries (the specs' `kubectl explain`)
    command = [str(e2e), f'--kubeconfig={kubeconfig}', *E2E_FLAGS, f'--ginkgo.focus={focus}',
               f'--ginkgo.json-report={report}'] + ([f'--ginkgo.skip={skip}'] if skip else [])
    command += [f'--kubectl-path={kubectl}'] if kubectl.exists() else []
    started = time.monotonic()
    with log.open('w') as output:
        subprocess.run(command, cwd=report.parent, stdout=output, stderr=subprocess.STDOUT, check=False)
    print(f'  {report.stem}: {time.monotonic() - started:.0f} s (log: {log})', file=sys.stderr)


def against_envtest(e2e: pathlib.Path, assets: pathlib.Path, focus: str, skip: str, workdir: pathlib.Path) -> None:
    sys.path.insert(0, str(ROOT))
    from kopf.testing import EnvtestCluster
    with EnvtestCluster(assets=assets) as cluster:
        run(e2e, cluster.kubeconfig, focus, skip, workdir / 'envtest.json', workdir / 'envtest.log')


def against_local(e2e: pathlib.Path, focus: str, skip: str, workdir: pathlib.Path) -> None:
    sys.path.insert(0, str(ROOT))
    from kopf.testing import LocalCluster
    with LocalCluster() as cluster:
        run(e2e, cluster.kubeconfig, focus, skip, workdir / 'local.json', workdir / 'local.log')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--backend', choices=['envtest', 'local', 'both'], default='both')
    parser.add_argument('--focus', default=FOCUS, help='a regular expression of spec texts (default: all 95)')
    parser.add_argument('--report', type=pathlib.Path, default=None, help='where the reports go (a temp dir)')
    parser.add_argument('--summarize', action='store_true', help='only summarize the reports in --report')
    parser.add_argument('--skip', default='', help='a regular expression of specs not to run (counted as not run)')
    args = parser.parse_args()
    workdir = (args.report or pathlib.Path(tempfile.mkdtemp(prefix='kopf-conformance-'))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    e2e = build('tools/conformance/build.sh')
    if args.summarize:
        selected = specs(e2e, args.focus, workdir)
        summarize(selected, {name: why for name in selected if (why := needs_a_pod(name))}, workdir)
        return
    assets = build('tools/envtest/build.sh') if args.backend != 'local' else None
    selected = specs(e2e, args.focus, workdir)
    pods = {name: why for name in selected if (why := needs_a_pod(name))}
    skip = '|'.join(f'({pattern})' for pattern in [*NEED_A_POD, *([args.skip] if args.skip else [])])
    if args.backend in ('envtest', 'both') and assets is not None:
        against_envtest(e2e, assets, args.focus, skip, workdir)
    if args.backend in ('local', 'both'):
        against_local(e2e, args.focus, skip, workdir)
    summarize(selected, pods, workdir)


def summarize(selected: list[str], pods: dict[str, str], workdir: pathlib.Path) -> None:
    envtest, local = outcomes(workdir / 'envtest.json'), outcomes(workdir / 'local.json')
    reasons = failures(workdir / 'local.json')
    rows = []
    for name in selected:
        if name in pods:
            print(f'  need a pod  {name}\n              ({pods[name]})')
            continue
        ours, theirs = local.get(name, 'not run'), envtest.get(name, 'not run')
        rows.append({'spec': name, 'envtest': theirs, 'local': ours, 'failure': reasons.get(name, '')})
        mark = '=' if ours == theirs else '!'
        print(f'{mark} envtest={theirs:<8} local={ours:<8} {name}')
        if ours != 'passed' and reasons.get(name):
            print(f'      {reasons[name]}')
    n = sum(1 for row in rows if row['envtest'] == 'passed')
    m = sum(1 for row in rows if row['local'] == 'passed')
    summary = {'specs': len(selected), 'envtest': n, 'local': m, 'pods': len(pods), 'rows': rows,
               'need_a_pod': pods}
    (workdir / 'summary.json').write_text(json.dumps(summary, indent=1))
    print(f'reports: {workdir}', file=sys.stderr)
    print(f'passed on envtest: {n}, passed on the local cluster: {m}, need a pod: {len(pods)}')


if __name__ == '__main__':
    os.environ.setdefault('PYTHONUNBUFFERED', '1')
    main()
