# One-command setup and checks. `make test` is what CI runs (.ci/run).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit docs demo bench charts clean envtest envtest-sharding test-envtest conformance dist

install: $(STAMP)

$(STAMP): setup.py pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs]'
	touch $(STAMP)

lint: install
	$(BIN)/ruff check kopf _kopf_pytest.py tests examples bench tools docs

typecheck: install
	$(BIN)/mypy

# Two workers (CI has 2 cores), a test file per worker at a time (its module-scoped clusters started once).
unit: install
	$(BIN)/pytest -n 2 --dist loadfile

test: lint typecheck unit docs

# The docs site in build/docs/ (Sphinx + MyST, docs/conf.py): every page in the navigation, the API reference
# from the docstrings of the public names; a warning (a broken link or anchor, a page outside the
# navigation, a docstring that does not parse) fails it. Offline: no link leaves the repository.
docs: install
	rm -rf build/docs
	$(BIN)/sphinx-build -E -W --keep-going -q -b html docs build/docs
	@echo "docs: build/docs/index.html"

# A real etcd + kube-apiserver + kube-controller-manager + kubectl, built once from their Go modules
# (tools/envtest/1.34.4) into ~/.cache/kopf/envtest/<version>/; prints that directory. Needs Go.
envtest:
	@tools/envtest/build.sh

# etcd + kube-apiserver 1.37.2 (tools/envtest/1.37.2): the server of the sharding tests (shardSelector=).
envtest-sharding:
	@tools/envtest/build.sh 1.37.2

# The cluster-facing suites (fidelity, e2e, examples) against the real API server: 1.34.4, and 1.37.2
# with ShardedListAndWatch for the sharding tests (one of each per pytest run).
test-envtest: install
	@tools/envtest/build.sh 1.37.2 >/dev/null
	KUBEBUILDER_ASSETS="$$(tools/envtest/build.sh)" $(BIN)/pytest tests/fidelity tests/e2e --backend=envtest

# Kubernetes' own [sig-api-machinery] [Conformance] specs (e2e.test, built once from tools/conformance into the
# envtest cache) against envtest and against the local cluster; prints `passed on envtest: N, passed on the local
# cluster: M, need a pod: K`. Needs Go; not in CI (about half an hour).
conformance: install
	$(BIN)/python tools/conformance/run.py $(if $(BACKEND),--backend=$(BACKEND),) $(if $(FOCUS),--focus='$(FOCUS)',) \
		$(if $(SKIP),--skip='$(SKIP)',)

demo: install
	$(BIN)/python examples/demo.py

bench: install
	$(BIN)/python bench/run.py $(if $(QUICK),--quick,)

# docs/charts/*.svg from bench/results/*.json (matplotlib: installed into bench/.venvs/plot, never into .venv).
charts: install
	$(BIN)/python bench/plot.py

# A wheel and an sdist in dist/, checked: the emulator's data files are in both, the sdist builds.
dist: install
	rm -rf dist build
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python tools/check_dist.py dist

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
