"""Findings rules, one module per family (cpu, memory, io, irq, mysql, cross, innodb, kernel, replication,
counters; helpers of the last four in context_kit). See FINDINGS.md."""
