"""The operating point learnt from a deployment's own traffic (issue 16).

`buckets`: evidence per similarity bucket (traffic, judged verdicts); `threshold`: the
lowest serving threshold whose served precision keeps a lower confidence bound at or
above the target; `judge_error`: verdicts corrected for a judge's known error rates.
Pure and synchronous: storage, sampling and judges live elsewhere.
"""
