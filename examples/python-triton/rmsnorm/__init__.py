"""The RMSNorm family written in Triton: family.py says what is computed, on which inputs and shapes,
and against which reference; naive.py and tuned.py are its variants, each registered by its own file
when it is imported (suite.py imports all three)."""
