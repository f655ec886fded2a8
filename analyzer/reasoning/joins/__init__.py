"""The join functions of analyzer/reasoning/links.py, one module per family (named in
``links.JOIN_FAMILIES``)."""
