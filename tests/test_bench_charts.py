"""The charts in README.md and docs/index.md: drawn by bench/plot.py (`make charts`) from results that exist.

matplotlib is not needed here (it is bench-only): the SVGs name their source files in their metadata, and
those must be in bench/results/; every chart shown is one that plot.py drew, and every one it drew is shown.
"""
import importlib.util
import pathlib
import re
from types import ModuleType

ROOT = pathlib.Path(__file__).parent.parent
CHARTS = ROOT / 'docs' / 'charts'


def _plot() -> ModuleType:
    spec = importlib.util.spec_from_file_location('bench_plot', ROOT / 'bench' / 'plot.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pages_show_every_chart_that_plot_draws() -> None:
    plot = _plot()
    drawn = {path.name for path in CHARTS.glob('*.svg')}
    assert drawn and drawn <= set(plot.CHARTS)   # (a chart without results yet is not drawn: plot.py says so)
    for page in (ROOT / 'README.md', ROOT / 'docs' / 'index.md'):
        assert plot.referenced(page.read_text()) == drawn, page


def test_each_chart_was_drawn_by_plot_from_existing_results() -> None:
    for path in sorted(CHARTS.glob('*.svg')):
        text = path.read_text()
        [description] = re.findall(r'<dc:description>(.*?)</dc:description>', text, flags=re.S)
        assert description.startswith('Drawn by bench/plot.py from '), path.name
        sources = re.findall(r'bench/results/[\w.-]+\.json', description)
        assert sources, path.name
        for source in sources:
            assert (ROOT / source).exists(), f'{path.name}: {source}'
        assert '<dc:date>' not in text   # reproducible: no date in the file
