"""Findings rules, one module per family, declared in ``analyzer.engine.RULE_FAMILIES`` (cpu, memory,
io, irq, mysql, sessions, joined, innodb, ...); the helpers they share are in ``analyzer.detect``.
The catalogue of every rule: docs/findings.md (``python -m analyzer.catalogue``).

Importing this package imports every declared family, so that their ``@rule`` decorators register;
a family whose module is missing or misspelt raises ``ModuleNotFoundError`` here, at start-up.
"""

import importlib

from analyzer.engine import RULE_FAMILIES

FAMILIES = tuple(importlib.import_module(f"{__name__}.{family}") for family in RULE_FAMILIES)
