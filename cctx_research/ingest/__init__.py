"""Bring your own data: readers and decoders for CCTP data held outside the interface."""
