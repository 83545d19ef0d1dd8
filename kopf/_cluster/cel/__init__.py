"""CEL as kube-apiserver 1.34 evaluates it: a parser, type checker, evaluator and cost estimator written
after cel-go v0.26 (the version in k8s.io/apiserver v0.34), with the Kubernetes libraries.

    nodes        the syntax tree, source positions, and cel-go's rendering of errors
    lexer        the tokens of CEL.g4
    unescape     string and bytes literals decoded as cel-go decodes them
    macros       has/all/exists/exists_one/map/filter, optional and two-variable macros
    parser       text to a syntax tree, with cel-go's ids, offsets and syntax error texts
    celtypes     CEL types, their formatting, assignability and unification
    decls        declarations: variables, functions, overloads, scopes
    checker      the type checker (cel-go's checker.go) with its error texts
    celvalues    runtime values and semantics: equality, ordering, overflow, texts, durations, timestamps
    stdlib       the standard library
    optionals    optional types
    regex        RE2 patterns run by Python's `re`
    timeparts    parts of timestamps and durations
    formatting   `string.format()`
    extlib       cel-go's extensions in Kubernetes' versions: strings, lists, sets, two-variable comprehensions
    k8slib       Kubernetes' list and regex libraries
    k8stypes     Kubernetes' quantity, URL, IP and CIDR libraries
    k8sformats   Kubernetes' format and semver libraries
    authz        Kubernetes' authorizer library, over an `Authorize` callable the caller provides
    literals     cel-go's literal validators (duration, timestamp and regex literals)
    interpreter  checked trees planned into closures and evaluated
    environment  the 1.34 base environment, and compiling an expression
    costmath     cost and size intervals that saturate as Go's uint64 arithmetic does
    costcalls    the costs of calls: cel-go's cases, its extensions' estimators, Kubernetes' library
    cost         cel-go's static cost estimator with Kubernetes' library costs
    schematypes  CEL types and values of OpenAPI schemas (Kubernetes' SchemaDeclType)
    crdpaths     a rule's `fieldPath`, validated and normalised
    crdrules     a CRD schema's rules, compiled per level
    crdchecks    why a real server refuses a CRD for its rules, in its words
    crdvalidation  a CRD's rules evaluated over an object and its old version, with ratcheting
    admissionexprs  ValidatingAdmissionPolicies' expressions compiled in the admission environment
    admissionruns  one policy evaluated for one request: its decisions

Pure functions over values; no I/O.
"""
