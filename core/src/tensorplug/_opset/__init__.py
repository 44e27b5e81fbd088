"""The op-set layer (internal): the standard operators and the Python callables made of them.

- ``native.py``: native_functions.yaml read into ``OpEntry``s;
- ``api.py``: defines the operators and says which public functions and methods exist, each
  made on first use (Note [Lazy public functions]);
- ``functions.py``: how one public function or method is made (overload choice, the fast
  path, signatures); ``templates.py``: the source they are generated from;
  ``python_args.py``: what they accept beyond their schemas;
- ``operators.py``: Tensor's Python operators, installed on Tensor (``install``), with
  ``construct.py`` (``tp.tensor``, ``Tensor(...)``, ``to``), ``values.py`` (``item``,
  ``tolist``, ``numpy``), ``indexing.py`` (``t[i]``) and ``repr.py``;
- ``own_ops.py``: the ``tensorplug`` namespace's operators; ``unique.py``: ``tp.unique``;
- ``reference.py``: plain-Python references of the public-function templates.

The public faces of this layer are ``tensorplug.ops`` and ``tensorplug.overrides`` (beside it,
for their import paths) and the functions on ``tensorplug`` itself; ``composites/`` holds the
layer's composite kernels (docs/architecture.md, Note [Layers]).
"""
