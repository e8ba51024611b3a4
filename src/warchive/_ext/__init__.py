"""Compiled kernels (built from ext/ by CMake). Import them through the public modules."""
