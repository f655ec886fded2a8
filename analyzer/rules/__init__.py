"""Findings rules, one module per family (cpu, memory, io, irq, mysql, cross). See FINDINGS.md."""
