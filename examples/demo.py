"""`make demo`: the main job on the embedded default (the local cluster).

Until the local cluster lands (issue 2, part 2), this only proves that the package is installed.
"""
import kopf

print(f'kopf {kopf.__version__} is installed; the local-cluster demo arrives with the emulator.')
