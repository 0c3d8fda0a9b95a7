"""The HTML report: one self-contained page of the results, the figures, specimens and every case.

Layer: the top of the stack (common <- benchmark <- ... <- review <- report); it reads the files the
stages below wrote (labels, traces, tables, review reports) and imports only their public records.
"""
