//! radiff: runs readahead scenarios on real kernels and diffs the traces against the model.
