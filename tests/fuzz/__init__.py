"""Differential fuzzing of d2s: generated functions run eagerly and through `d2s.to_static`."""
