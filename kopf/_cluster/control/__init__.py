"""Running and steering the emulator: its assembly, the control operations, and the ways in.

    emulator     `Emulator`: the parts assembled (state, watch hub, faults, access, controllers, HTTP server),
                 their lifecycle in the current event loop, direct object access (apply, get, list)
    operations   the table of control operations (`Controls`): faults, access rules, watches and history,
                 counters and logs; the methods of `Emulator` and `LocalCluster`, the `/_emulator/` routes
    httpapi      the HTTP control API under `/_emulator/`, served from that table
    local        `LocalCluster` (public as `kopf.testing.LocalCluster`): the emulator in this loop or a thread
    command      `kopf cluster`: serve until SIGINT/SIGTERM, with a kubeconfig and pre-applied manifests
    manifests    reading manifests for `--apply` and `LocalCluster.apply`: dicts, lists, YAML text or files
    featuregates  `--feature-gates`: parsed, refused when unknown (also for the version posed as), decided

The top of the emulator: nothing else in `kopf._cluster` imports this package.
"""
