"""The entity comparison: the numbers, names, dates, units, polarity and content
terms that must agree before two asks may share an answer."""
