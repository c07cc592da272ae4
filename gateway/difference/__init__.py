"""What separates two asks: a token alignment whose differing spans are classified as
meaning-bearing or meaning-preserving (`analysis.py`), over a lexicon that is data with
examples (`data/lexicon.yaml`)."""
