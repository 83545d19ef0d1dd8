"""Indices: in-memory views of Pods, kept up to date by `@kopf.index` handlers and read by others.

- `pods_by_app`: every Pod with an `app` label, its name under the key `(namespace, app)`.
- `running_pods`: the names of the Pods in phase `Running`, per namespace. The `field=`/`value=`
  filter does the selection: when a Pod leaves that phase (or is deleted), its name is removed.
- `summarize` (a timer of `KopfExample` objects, every 0.5 s): reads both indices for its own
  namespace and writes what it found to `status.summarize`.
- `indexed_pods` (a liveness probe): how many Pods each index holds, served at `--liveness`.

Each index arrives as a kwarg named by its id (here: the function names). An index is a read-only
mapping of key → a collection of values (one value per Pod). No handler runs until the Pods that
exist at start are all indexed, so `summarize` never sees a half-filled index. The indices live in
this process's memory only: a restarted operator rebuilds them from the cluster.
"""
import kopf


@kopf.index('pods', labels={'app': kopf.PRESENT})
def pods_by_app(namespace, name, labels, **_):
    return {(namespace, labels['app']): name}


@kopf.index('pods', field='status.phase', value='Running')
def running_pods(namespace, name, **_):
    return {namespace: name}


@kopf.timer('kopfexamples', interval=0.5)
def summarize(namespace, pods_by_app, running_pods, **_):
    apps = sorted((app, sorted(names)) for (ns, app), names in pods_by_app.items() if ns == namespace)
    return {
        'running-pods': sorted(running_pods.get(namespace, [])),
        # A list, not a dict of apps: the status is merge-patched, and a dict would keep the apps gone.
        'apps': [{'app': app, 'pods': names} for app, names in apps],
    }


@kopf.on.probe(id='indexed_pods')
def indexed_pods(pods_by_app, running_pods, **_):
    return {
        'labelled': sum(len(names) for names in pods_by_app.values()),
        'running': sum(len(names) for names in running_pods.values()),
    }
