//! The command-line options the benchmarks share: `--name value`, a number or a comma-separated list.

#![forbid(unsafe_code)]

/// The value after `--name` on the command line, if given.
pub fn value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1).cloned()
}

/// The number after `name`, or `default` when it is missing or not a number.
pub fn number(name: &str, default: usize) -> usize {
    value(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The comma-separated numbers after `name`, or those of `default`.
pub fn numbers(name: &str, default: &str) -> Vec<usize> {
    value(name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}
