"""Package metadata for kopf: a Python framework for Kubernetes operators."""
import pathlib

from setuptools import find_packages, setup

HERE = pathlib.Path(__file__).parent


def read_requirements(name: str) -> list[str]:
    lines = (HERE / name).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith('#')]


def read_version() -> str:
    namespace: dict[str, str] = {}
    exec((HERE / 'kopf' / '_version.py').read_text(), namespace)
    return namespace['VERSION']


setup(
    name='kopf',
    version=read_version(),
    description='Kubernetes Operator Pythonic Framework, with a built-in local cluster',
    long_description=(HERE / 'README.md').read_text(),
    long_description_content_type='text/markdown',
    license='MIT',
    python_requires='>=3.11',
    packages=find_packages(include=['kopf', 'kopf.*']),
    py_modules=['_kopf_pytest'],  # the pytest plugin (entry point below): outside the package, so that it stays thin
    package_data={'kopf': ['py.typed', 'peering.yaml', '_cluster/openapi/data/*.json', '_cluster/openapi/data/*.xz',
                          '_shared/data/*.json', '_cluster/rbac/data/*.json', '_cluster/patchtypes/data/*.json']},
    include_package_data=True,
    install_requires=read_requirements('requirements.txt'),
    extras_require={
        'full-auth': ['pykube-ng>=23.6.0', 'kubernetes>=37.0.0'],
        'cluster': ['cryptography>=50.0.0'],  # HTTPS mode of the local cluster (--tls)
        'fast': ['orjson>=3.13.0'],
        'webhooks': ['cryptography>=50.0.0'],  # self-signed webhook servers (kopf.WebhookServer() without a cert)
        'dev': ['pyngrok>=9.1.0', 'cryptography>=50.0.0'],  # webhook tunnels (ngrok) and self-signed servers
        'uvloop': ['uvloop>=0.23.0'],  # `kopf run` uses it when installed (--no-uvloop: asyncio's own loop)
        'metrics': ['prometheus-client>=0.26.0'],  # `kopf run --metrics`, `settings.metrics`
        'docs': ['sphinx>=9.0.4', 'myst-parser>=5.2.0', 'furo>=2025.12.19'],  # `make docs`: the docs site
        'models': ['pydantic>=2.11.0'],  # typed resources: `kopf crd`, `--install-crds`, parsed handler kwargs
        'test': [
            'pytest>=9.2.0',
            'pytest-asyncio>=1.5.0',
            'looptime>=0.9',
            'pytest-timeout>=2.4.0',
            'pytest-xdist>=3.8.0',
            'kubernetes>=37.0.0',
            'pykube-ng>=23.6.0',
            'cryptography>=50.0.0',
            'orjson>=3.13.0',
            'mypy>=2.4.1',
            'ruff>=0.17.6',
            'types-PyYAML>=6.0.12',
            'uvloop>=0.23.0',
            'build>=1.3.0',  # make dist
            'setuptools>=75', 'wheel',  # tests/test_packaging_offline.py builds the wheel without network or isolation
            'prometheus-client>=0.26.0',
            'pydantic>=2.11.0',
        ],
    },
    entry_points={
        'console_scripts': ['kopf = kopf.cli:main'],
        # kopf.testing's fixtures in every pytest run of the venv (`-p no:kopf` turns them off): a module that imports
        # only pytest until a fixture is requested (the local cluster, envtest), not even kopf's facade.
        'pytest11': ['kopf = _kopf_pytest'],
    },
    classifiers=[
        'Programming Language :: Python :: 3.11',
        'Programming Language :: Python :: 3.12',
        'Programming Language :: Python :: 3.13',
        'Framework :: AsyncIO',
        'Typing :: Typed',
    ],
)
