"""The local Kubernetes API emulator (`kopf cluster`, `kopf.testing.LocalCluster`): the server side.

An aiohttp web application with real Kubernetes semantics. Never imported by the operator's runtime path.
"""
