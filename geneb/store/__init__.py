"""The Zarr v3 feature store: keys, layout, provenance, read/write, export."""

from geneb.store.feature_store import FeatureStore, StoreEntry
from geneb.store.keys import StoreKey, layer_key, safe_name
from geneb.store.provenance import Provenance
from geneb.store.writer import WritePlan

__all__ = [
    "FeatureStore", "Provenance", "StoreEntry", "StoreKey", "WritePlan", "layer_key", "safe_name",
]  # fmt: skip
