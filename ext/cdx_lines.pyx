# cython: language_level=3
"""placeholder"""
