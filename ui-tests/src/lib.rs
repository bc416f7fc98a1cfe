//! Fixtures live under `tests/`.
