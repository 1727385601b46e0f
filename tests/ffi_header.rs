//! The checked-in `include/neardup.h` is exactly what cbindgen generates from `src/ffi/` now.
//! Regenerate it with `NEARDUP_BLESS=1 cargo test --release --test ffi_header`.

use std::path::Path;

#[test]
fn header_matches_the_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    // Only the files of src/ffi/: the rest of the crate's public constants are not the ABI's.
    let builder = cbindgen::Builder::new().with_config(config);
    // src/ffi/mod.rs brings its submodules in.
    let bindings = builder
        .with_src(root.join("src").join("ffi").join("mod.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = root.join("include").join("neardup.h");
    if std::env::var_os("NEARDUP_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/neardup.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/neardup.h differs from what cbindgen generates from src/ffi; regenerate it with \
         `NEARDUP_BLESS=1 cargo test --release --test ffi_header` and commit it"
    );
}
