"""Typed resources: Python models (pydantic or dataclasses) become CRDs, and handlers receive typed objects.

Declaring needs no pydantic (`import kopf` stays light); generating imports it when first used. The typed
kwargs of handlers are the core's (`kopf._core.typedkwargs`): this feature is the models' side, the CRDs.

- `markers`  the schema markers (`kopf.Rule`, `kopf.ListMap`, ...) and the CRD's columns and scale (no pydantic)
- `declaring`  `@kopf.custom_resource`: a class becomes one version of a resource; the names checked (no pydantic)
- `docstrings`  descriptions from the source: class docstrings and attribute docstrings (pure)
- `extensions`  the markers' `x-kubernetes-*` extensions on a generated schema node, and their refusals (pure)
- `generating`  a model's structural OpenAPI schema from pydantic's core schema (imports pydantic)
- `versioning`  may two versions convert without a webhook (the same stored fields); the versions' order (pure)
- `definitions`  the CRDs of the declared classes: versions grouped, checked, ordered; YAML (imports pydantic)
- `installing`  `--install-crds`: create, update or keep each CRD at startup; stored versions never dropped (I/O)
- `finding`  the classes that `kopf crd MODULE[:CLASS]` names: files or modules, all declared ones or one
"""
