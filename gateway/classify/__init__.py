"""The non-cacheable classifier: writes, time-sensitive, IDs, follow-ups, personal data.

`classifier` holds the API (`RequestClassifier`, `ClassifierSettings`, `Classification`,
`NonCacheableClass`); the rules live by job: `ids`, `write_en`, `time_en`, `personal_en`
(with their word lists in `lexicon_en`), `rules_zh`, `followup`, `tools`, `messages`;
`classes` holds the class vocabulary, `checks` the registry of checks per class.
"""
