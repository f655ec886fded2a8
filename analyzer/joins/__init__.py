"""The join functions of analyzer/links.py, one module per family (named in ``links.JOIN_FAMILIES``)."""
