"""Sweep measurements, one per module: each registers itself with :func:`verify.sweep.measures.measure`.

verify.sweep.measures imports every module of this package, so a new measurement is one new file here.
"""
