"""The non-cacheable classifier: writes, time-sensitive, IDs, follow-ups, personal data.

`classifier` holds the API (`RequestClassifier`, `ClassifierSettings`, `Classification`,
`NonCacheableClass`); `classes` the class vocabulary and `checks` the registry of checks
per class. The rules' patterns and word lists are data (`gateway/rules/data/*/*.yaml`);
the modules here hold the procedure that reads them, by job: `ids`, `write_en`,
`time_en`, `personal_en`, `rules_zh`, `followup`, `tools`, `messages`.
"""
