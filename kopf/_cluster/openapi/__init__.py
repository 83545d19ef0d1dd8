"""OpenAPI v3 schemas as the API server applies them: defaulting, pruning, validation, structural checks.

    conforming     the one caller of this layer for the write pipeline: default -> (Strict) -> prune -> validate
    validation     validation of objects by their schemas (types, formats, enums, lists, maps, ...)
    composition    `allOf`/`anyOf`/`oneOf`/`not`, with kube-openapi's texts
    defaulting     `default` values, top-down, and non-nullable nulls dropped
    structural     the structural-schema rules a CRD's schemas must follow to be accepted
    embedded       objects inside custom resources marked `x-kubernetes-embedded-resource`
    fielderrors    field errors (`StatusCause`s) with the real server's reasons and texts
    kindschemas    the schemas of the built-in kinds (from `data/`), and their strategic-merge metadata
    documents      the served OpenAPI documents (/openapi/v2, /openapi/v3): the real server's, and the CRDs'
    openapiv2      a custom kind's schema as /openapi/v2 publishes it (less than v3: Swagger 2.0, kubectl)
    gotypes        built-ins' JSON types checked as Go decodes them (a 400, not a 422)
    fieldorder     objects in the field order kube-apiserver writes them (Go structs' order, sorted maps)
    data           the generated schema file of the built-in kinds, their Go field order, the OpenAPI documents

Synchronous functions over dicts; no I/O (but reading the package data once).
"""
