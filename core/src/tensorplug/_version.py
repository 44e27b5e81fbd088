"""tensorplug's release number (re-exported as ``tensorplug.__version__``)."""

__version__ = "0.1.2"
