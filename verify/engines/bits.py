"""The Arb precisions a run accepts, in bits (``--arb BITS``): at least float64's 53, at most 2^16 (where one step
of the certified engine already takes seconds). A module of its own so that a command's options read them
without loading the engines."""
MIN_BITS, MAX_BITS = 53, 1 << 16

__all__ = ["MIN_BITS", "MAX_BITS"]
