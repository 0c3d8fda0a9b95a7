"""Validity reports: does the edit survive the conditions, and were the conditions collected alike?

Absorption rates compare conditions; these checks ask whether such a
comparison is fair. Syntax: does the edited code still parse, and do echoed
boundary markers explain the failures? Function: does the edited HumanEval
function still pass its tests (opt-in, in a sandbox)? Edit completion: how
close is the edited text to the reference edit? Provenance: were all
conditions of a model answered by the same served model, at about the same time?
"""
