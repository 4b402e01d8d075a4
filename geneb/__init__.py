"""geneb: one protocol to compare genomic (DNA) foundation models.

Extract once into a Zarr feature store, probe many times, analyse with uncertainty.
"""

__version__ = "0.1.0"

from geneb.errors import GenebError  # noqa: E402

__all__ = ["GenebError", "__version__"]
