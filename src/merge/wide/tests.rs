//! Unit tests of the format 7 partition.
