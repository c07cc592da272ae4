"""The non-cacheable classifier: writes, time-sensitive, IDs, follow-ups, personal data.

`classifier` holds the API (`RequestClassifier`, `ClassifierSettings`, `Classification`,
`NonCacheableClass`); the rules live by job: `ids`, `write_en`, `time_en`, `personal_en`
(with their word lists in `lexicon_en`), `lexicon_zh`, `followup`, `tools`, `messages`.
"""
