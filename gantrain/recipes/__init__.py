"""Recipes: the layer above the engine that turns a config into players, a schedule, data and
evaluation. ``base.py`` is the run every recipe shares; each subpackage is one recipe; the
registry maps a config's ``task`` to its recipe."""
