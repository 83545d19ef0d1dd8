"""Calling admission webhooks around the write pipeline, as the API server does.

    reviews    the pure part: which webhooks match a request, the AdmissionReview they receive, what answers mean
    policies   ValidatingAdmissionPolicies and their bindings: matching, params, decisions (CEL in `kopf._cluster.cel`)
    calling    the calling part: `Admitter` POSTs reviews over HTTPS (mutating one by one, then validating
               concurrently) around the writes of `pipeline`, retrying writes that raced with the calls

Only the requests of a write with webhook configurations or policy bindings stored come here; everything else
skips it.
"""
