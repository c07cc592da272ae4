"""The operating point learnt from a deployment's own traffic (issue 16).

The pure core: `buckets` (evidence per similarity bucket: traffic, judged verdicts),
`threshold` (the lowest serving threshold whose served precision keeps a lower
confidence bound at or above the target), `judge_error` (verdicts corrected for a
judge's known error rates). Around it: `store` (the counters per scope, embedded or in
Redis), `stats` (the in-process view, synced in the background), `serving` (what the
semantic stage reads on the request path), `judges` and `shadow` (verification of
misses after the response), `budget` (judge tokens per minute), `report` (what
operators see).
"""
