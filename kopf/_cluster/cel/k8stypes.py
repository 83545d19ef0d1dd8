from kopf._cluster.cel.decls import Env


def declare(env: Env) -> None:
    pass
