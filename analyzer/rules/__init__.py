"""Findings rules, one module per family, declared in ``analyzer.engine.RULE_FAMILIES`` (cpu, memory,
io, irq, mysql, sessions, correlated, innodb, ...) and registered with ``@rule`` of ``registry``; the
helpers they share are in ``analyzer.detect``, their words' template in ``analyzer.texts``.
The catalogue of every rule: docs/findings.md (``python -m analyzer.catalogue``).

The engine (analyzer/engine.py) imports every declared family, so that their ``@rule`` decorators
register; a family whose module is missing or misspelt raises ``ModuleNotFoundError`` there, at
start-up. This package imports nothing itself: a family imports the registry, never the engine.
"""
