"""The embedded backend: SQLite files in the data directory and in-process indexes,
for one gateway process. Opened by `storage.embedded.open`."""
