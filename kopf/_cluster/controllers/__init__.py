"""The controllers every operator relies on, run by the emulator itself.

    sweeping   namespace cleanup, CRD cleanup, garbage collection (background by ownerReferences; foreground
               and orphan deletion by their finalizers), event expiry; `Sweeper`: the task that runs a sweep
               when woken (after deletions) and every second

A sweep is synchronous and idempotent; it writes only through the write pipeline (`pipeline.writing`).
"""
