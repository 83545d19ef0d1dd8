"""Sphinx configuration of the docs site (`make docs`): the markdown pages via MyST, the API reference
via autodoc from the public names (docs/_ext/kopfdocs.py), warnings as errors (-W in the Makefile)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent / '_ext'))

project = 'kopf'
author = 'the kopf contributors'
copyright = 'the kopf contributors'

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'kopfdocs',
]

source_suffix = {'.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build']

# Markdown: GitHub-style anchors for headings (the pages link to them as `page.md#some-heading`),
# so that a link to a missing page or heading is a warning, hence an error.
myst_heading_anchors = 4
myst_enable_extensions = ['colon_fence']

# Docstrings are reStructuredText to autodoc; ours mark code with single backticks, as markdown does.
default_role = 'literal'
autodoc_member_order = 'bysource'
autodoc_typehints_format = 'short'
autodoc_class_signature = 'mixed'
add_module_names = True

html_theme = 'furo'
html_title = 'kopf'
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
python_maximum_signature_line_length = 100  # longer ones: one parameter per line
