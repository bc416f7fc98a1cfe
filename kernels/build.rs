//! Validates every library kernel's WGSL with naga against its metadata while the crate builds: a bad kernel
//! fails the build, with every kernel's errors at once.

#[path = "src/table.rs"]
mod table;

fn main() {
    println!("cargo::rerun-if-changed=src/table.rs");
    println!("cargo::rerun-if-changed=wgsl");
    let errors: Vec<String> = table::KERNELS
        .iter()
        .filter_map(|k| graph_core::library::validate_kernel(k).err())
        .collect();
    if !errors.is_empty() {
        for e in &errors {
            println!("cargo::error={}", e.replace('\n', " | "));
        }
        eprintln!("{}", errors.join("\n\n"));
        std::process::exit(1);
    }
}
