"""Developer tools kept off the library's import path: the demo corpus
generator, used by tests, the demo and the benchmarks.

Tools may import :mod:`pipeline`; :mod:`pipeline` never imports them.
"""
