"""A short fingerprint of an entry's identity, recorded in results rows."""

from __future__ import annotations

import hashlib
import json

from geneb.store.provenance import Provenance


def entry_fingerprint(prov: Provenance) -> str:
    blob = json.dumps(prov.identity(), sort_keys=True, default=str).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]
