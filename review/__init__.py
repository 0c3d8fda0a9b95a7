"""Blinded human review of the scorer's verdicts: sample, serve one case at a time, report precision and recall.

The top layer of the kit (it reads labels, traces and the benchmark, and uses the
statistics' tables and intervals):

    sample   labels + traces  ->  a review file: header (design) + cases, no verdicts
    serve    the review file  ->  a local page, one case at a time; answers appended to the file
    report   the review file + labels  ->  confusion matrix, precision, weighted recall, miss rates

The kit's verdicts never enter the review file: the report joins them from the
labels, whose checksum the header records. docs/REVIEW.md describes the whole.
"""
