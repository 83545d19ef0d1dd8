"""SVG charts of the latest benchmark results, drawn from bench/results/*.json (never by hand).

    make charts                  # = .venv/bin/python bench/plot.py
    python bench/plot.py --out DIR

Charts (into docs/charts/, shown in README.md and docs/index.md):

- `burst.svg`    ours vs upstream: the burst's creations and deletions per second, CPU seconds per 1,000 objects
                 (the newest full `bench/run.py` result);
- `scale.svg`    idle RSS and the restart's resume time against the number of existing objects (the newest
                 `bench/run.py` result for each count: quick 1,000, full 10,000, `--idle N` for others);
- `timers.svg`   timers (`interval=10`): the CPU they add and their lateness, p50 and p99, per object count
                 (`bench/timers.py`: the newest result of each side for each count);
- `sharding.svg` CPU seconds per 1,000 objects per replica: one operator, one with 6 shard Leases, 3 replicas
                 sharing 6 shards (`bench/sharding.py`);
- `faults.svg`   the burst under write faults: seconds to converge after creations and after deletions, ours vs
                 upstream, median of the runs (`bench/faults.py`), when such a result exists.

matplotlib is a bench-only dependency: without it in this interpreter, it is installed into a throw-away
virtualenv, bench/.venvs/plot (git-ignored), and the script runs again there. The SVGs are reproducible:
no date, fixed ids, text as text; each names its source files in its metadata (`<dc:description>`).
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / 'results'
OUT = ROOT / 'docs' / 'charts'
VENV = HERE / '.venvs' / 'plot'
MATPLOTLIB = 'matplotlib>=3.10'
OURS, UPSTREAM = '#2a7ab0', '#c8553d'   # the same two colours in every chart
Result = tuple[pathlib.Path, dict[str, Any]]


def results(pattern: str = '*.json') -> list[Result]:
    """The result files (not latest.json, a copy; not "before" baselines), oldest first by their own date."""
    found = []
    for path in RESULTS.glob(pattern):
        if path.name == 'latest.json' or 'before' in path.name:
            continue
        data = json.loads(path.read_text())
        if isinstance(data, dict) and isinstance(data.get('meta'), dict):
            found.append((path, data))
    return sorted(found, key=lambda item: (str(item[1]['meta'].get('date', '')), item[0].name))


def burst_results() -> list[Result]:
    """`bench/run.py`'s reports with both sides (named by date alone: the others are prefixed by their kind)."""
    return [(path, data) for path, data in results('2*.json')
            if 'objects_per_s' in data.get('ours', {}) and 'objects_per_s' in data.get('upstream', {})]


# -- the charts -------------------------------------------------------------------------------------

def burst_chart(plt: Any) -> tuple[Any, list[pathlib.Path]] | None:
    full = [item for item in burst_results() if item[1]['meta'].get('mode') == 'full']
    if not full:
        return None
    path, data = full[-1]
    ours, upstream, meta = data['ours'], data['upstream'], data['meta']
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    _bars(left, ['creations/s', 'deletions/s'], [ours['objects_per_s'], ours['deletes_per_s']],
          [upstream['objects_per_s'], upstream['deletes_per_s']], 'objects per second (higher is better)', '{:.0f}')
    _bars(right, ['create + delete', 'create only'], [ours['cpu_s_per_1000'], ours['cpu_s_per_1000_create']],
          [upstream['cpu_s_per_1000'], upstream['cpu_s_per_1000_create']],
          'CPU seconds per 1,000 objects (lower is better)', '{:.2f}')
    figure.suptitle(f'A burst of {meta["objects"]:,} objects, median of {meta["repeats"]} '
                    f'({meta["date"][:10]}, {meta["machine"]["cores"]} cores)')
    return figure, [path]


def scale_chart(plt: Any) -> tuple[Any, list[pathlib.Path]] | None:
    newest: dict[int, Result] = {}
    for path, data in burst_results():
        if 'rss_mb_idle' in data['ours'] and 'rss_mb_idle' in data['upstream']:
            newest[int(data['meta']['idle_objects'])] = (path, data)
    if not newest:
        return None
    counts = sorted(newest)
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    panels = ((left, 'rss_mb_idle', 'RSS when idle, MB'), (right, 'resume_s', 'resume after a restart, s'))
    for axes, key, label in panels:
        for side, colour, name, dy in (('ours', OURS, 'ours', -12), ('upstream', UPSTREAM, 'upstream 1.45.2', 6)):
            values = [newest[count][1][side][key] for count in counts]
            axes.plot(counts, values, marker='o', color=colour, label=name)
            for count, value in zip(counts, values, strict=True):  # ours below its points, upstream's above
                axes.annotate(f'{value:.1f}', (count, value), textcoords='offset points', xytext=(0, dy),
                              ha='center', fontsize=8)
        axes.set_xscale('log')
        axes.set_xticks(counts, [f'{count:,}' for count in counts])
        axes.set_xlabel('existing objects')
        axes.set_title(label + ' (lower is better)', fontsize=10)
        axes.set_ylim(bottom=0)
        axes.legend(fontsize=8)
    figure.suptitle('Memory and restart time against the number of objects')
    return figure, [newest[count][0] for count in counts]


def timers_chart(plt: Any) -> tuple[Any, list[pathlib.Path]] | None:
    newest: dict[tuple[str, int], Result] = {}
    for path, data in results('timers-*.json'):
        for side in ('ours', 'upstream'):
            for size in data.get(side, {}):
                newest[side, int(size)] = (path, data)
    sizes = sorted({size for (side, size) in newest if (('ours', size) in newest and ('upstream', size) in newest)})
    if not sizes:
        return None

    def value(side: str, size: int, key: str) -> float:
        return float(newest[side, size][1][side][str(size)][key])

    labels = [f'{size:,}' for size in sizes]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    _bars(left, labels, [value('ours', s, 'cpu_pct_increase') for s in sizes],
          [value('upstream', s, 'cpu_pct_increase') for s in sizes], 'CPU added by the timers, % of a core', '{:.0f}')
    left.set_xlabel('objects with a timer')
    for side, colour, name in (('ours', OURS, 'ours'), ('upstream', UPSTREAM, 'upstream 1.45.2')):
        for key, style in (('lateness_p50_ms', '-'), ('lateness_p99_ms', ':')):
            right.plot(labels, [value(side, s, key) for s in sizes], style, marker='o', color=colour,
                       label=f'{name}, {key[9:12]}')
    right.set_yscale('log')
    right.set_title('lateness of the calls, ms (lower is better)', fontsize=10)
    right.set_xlabel('objects with a timer')
    right.legend(fontsize=8)
    figure.suptitle('Timers every 10 s: CPU and lateness')
    return figure, sorted({path for path, _ in newest.values()})


def sharding_chart(plt: Any) -> tuple[Any, list[pathlib.Path]] | None:
    found = results('sharding-*.json')
    if not found:
        return None
    path, data = found[-1]
    setups = [(key, label) for key, label in (('single', 'one operator'), ('single-sharded', 'one, 6 shards'),
                                              ('3x6', '3 replicas, 6 shards')) if key in data]
    figure, axes = plt.subplots(figsize=(7, 3.6))
    width = 0.25
    for index, (key, _) in enumerate(setups):
        replicas = data[key]['cpu_s_per_1000_by_replica']
        for replica, cpu in enumerate(replicas):
            x = index + (replica - (len(replicas) - 1) / 2) * width
            axes.bar(x, cpu, width * 0.9, color=OURS)
            axes.annotate(f'{cpu:.2f}', (x, cpu), textcoords='offset points', xytext=(0, 3), ha='center', fontsize=8)
        axes.annotate(f'{data[key]["objects_per_s"]:.0f} objects/s', (index, 0), textcoords='offset points',
                      xytext=(0, -28), ha='center', fontsize=8, annotation_clip=False)
    axes.set_xticks(range(len(setups)), [label for _, label in setups])
    axes.set_title('CPU seconds per 1,000 objects, per replica (lower is better)', fontsize=10)
    figure.suptitle(f'Sharding: {data["meta"]["objects"]:,} objects, {data["meta"]["date"][:10]}')
    return figure, [path]


def faults_chart(plt: Any) -> tuple[Any, list[pathlib.Path]] | None:
    found = [item for item in results('faults-*.json') if 'upstream' in item[1] and 'ours' in item[1]]
    if not found:
        return None
    path, data = found[-1]
    meta = data['meta']
    figure, axes = plt.subplots(figsize=(7, 3.6))
    _bars(axes, ['creations converged', 'deletions converged'],
          [data['ours']['create_s'], data['ours']['delete_s']],
          [data['upstream']['create_s'], data['upstream']['delete_s']], 'seconds (lower is better)', '{:.1f}')
    load = meta.get('loadavg_end', [None])[0]
    figure.suptitle(f'{meta["objects"]:,} objects under write faults, median of {meta["runs"]} '
                    f'({meta["date"][:10]}, load {load})\n{meta["faults"]}', fontsize=9)
    return figure, [path]


CHARTS: dict[str, Callable[[Any], tuple[Any, list[pathlib.Path]] | None]] = {
    'burst.svg': burst_chart, 'scale.svg': scale_chart, 'timers.svg': timers_chart,
    'sharding.svg': sharding_chart, 'faults.svg': faults_chart,
}


def _bars(axes: Any, labels: list[str], ours: Iterable[float], upstream: Iterable[float], title: str,
          fmt: str) -> None:
    xs = range(len(labels))
    for offset, values, colour, name in ((-0.2, list(ours), OURS, 'ours'),
                                         (0.2, list(upstream), UPSTREAM, 'upstream 1.45.2')):
        positions = [x + offset for x in xs]
        axes.bar(positions, values, 0.38, color=colour, label=name)
        for x, value in zip(positions, values, strict=True):
            axes.annotate(fmt.format(value), (x, value), textcoords='offset points', xytext=(0, 3), ha='center',
                          fontsize=8)
    axes.set_xticks(list(xs), labels)
    axes.set_title(title, fontsize=10)
    axes.margins(y=0.15)
    axes.legend(fontsize=8)


# -- running ----------------------------------------------------------------------------------------

def draw(out: pathlib.Path) -> list[pathlib.Path]:
    import matplotlib
    matplotlib.use('svg')
    import matplotlib.pyplot as plt
    plt.rcParams.update({'svg.hashsalt': 'kopf-bench', 'svg.fonttype': 'none', 'font.size': 9,
                         'axes.spines.top': False, 'axes.spines.right': False})
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, chart in CHARTS.items():
        drawn = chart(plt)
        if drawn is None:
            print(f'{name}: no results to draw it from', file=sys.stderr)
            continue
        figure, sources = drawn
        figure.tight_layout()
        description = 'Drawn by bench/plot.py from ' + ', '.join(f'bench/results/{p.name}' for p in sources)
        figure.savefig(out / name, format='svg', metadata={'Date': None, 'Creator': 'bench/plot.py',
                                                           'Description': description})
        plt.close(figure)
        written.append(out / name)
        print(f'{out / name}: {description}')
    return written


def ensure_matplotlib() -> None:
    """Re-run this script in bench/.venvs/plot (made once, with matplotlib) if this interpreter lacks it."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    python = VENV / 'bin' / 'python'
    if not python.exists():
        print(f'installing {MATPLOTLIB} into {VENV} (once)', file=sys.stderr)
        subprocess.run([sys.executable, '-m', 'venv', str(VENV)], check=True)
        subprocess.run([str(python), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', MATPLOTLIB],
                       check=True)
    os.execv(str(python), [str(python), '-P', __file__, *sys.argv[1:]])  # -P: not bench/ first (its operator.py)


def referenced(text: str) -> set[str]:
    """The chart files that a page shows (for the tests: `charts/<name>.svg`)."""
    return set(re.findall(r'charts/([\w-]+\.svg)', text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', type=pathlib.Path, default=OUT, help='where the SVGs go (docs/charts/)')
    args = parser.parse_args()
    ensure_matplotlib()
    draw(args.out)


if __name__ == '__main__':
    main()
