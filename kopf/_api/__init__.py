"""The Kubernetes API client: credentials, requests and errors, discovery, list+watch, patching, events.

The only package that uses aiohttp's client. Upper layers catch its errors by class, never by status code.
"""
