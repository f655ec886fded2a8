"""The pieces of bench/generate_bundle.py: the capture plan, the simulated server, the member writers and the
packing."""
