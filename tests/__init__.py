"""The test suite: one folder per room of src/loopwright."""
