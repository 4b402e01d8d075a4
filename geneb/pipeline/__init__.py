"""The whole job in one call: a plan file drives extract -> probe -> report."""
