"""Classifier rules as data: YAML files under `data/` and the one compiler that loads them.

`compile.RuleBook.packaged()` loads every file shipped with the package; the rule
modules (`gateway.classify.*`) take their patterns and word lists from it by name.
"""
