"""Statistics and tables: from absorption labels to the numbers a paper reports.

numpy and the standard library only, exact where exactness is cheap (binomial
tails and the sign-flip distribution are computed with integers). Every output
is byte-identical for the same labels: fixed formatting, sorted models, fixed
condition and contrast order, fixed and recorded seeds.
"""
