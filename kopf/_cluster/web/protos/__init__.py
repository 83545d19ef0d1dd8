"""Protobuf field tables of the built-in kinds (generated from kubectl's embedded descriptors)."""
