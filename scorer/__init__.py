"""Turn traces into absorption labels: extraction, the three-tier cascade, entailment."""
