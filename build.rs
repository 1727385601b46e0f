//! The library's source id (`neardup::SOURCE_ID`): a hash of the sources a build was
//! made from, so that two builds (the command line and the Python package, say) can be told to
//! come from the same library or not.
//!
//! Issue #34: the command line and `insert_many` "differed on 158 of dev's 20,000
//! representatives" in whole-batch fingerprint order. The code paths agree; the command line in
//! the shared target directory had been built from another branch (another verification) than
//! the Python wheel. Nothing told the two builds apart, since both said version 0.1.0.
//!
//! Hashed: every file under `src/`, `Cargo.toml` and the workspace's `Cargo.lock` (the versions
//! of the HTML parser and the other dependencies change verdicts too), by relative path and
//! content, in path order; xxh3-64, as hex.

use std::fs;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    collect(&root, Path::new("src"), &mut files);
    for f in ["Cargo.toml", "Cargo.lock"] {
        if root.join(f).is_file() {
            files.push(PathBuf::from(f));
        }
    }
    files.sort();
    let mut h = Xxh3::new();
    for f in &files {
        // A file that cannot be read hashes as empty: the id still changes with its name.
        let content = fs::read(root.join(f)).unwrap_or_default();
        let name = f.to_string_lossy();
        h.update(&(name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(&(content.len() as u64).to_le_bytes());
        h.update(&content);
    }
    println!("cargo:rustc-env=NEARDUP_SOURCE_ID={:016x}", h.digest());
    // Cargo scans a directory named here for any change below it.
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Every file below `root/dir`, as paths relative to `root` (`/`-separated on every platform,
/// so the id does not depend on it).
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(root.join(dir)) else {
        return;
    };
    for e in entries.flatten() {
        let rel = dir.join(e.file_name());
        match e.file_type() {
            Ok(t) if t.is_dir() => collect(root, &rel, out),
            Ok(_) => out.push(PathBuf::from(rel.to_string_lossy().replace('\\', "/"))),
            Err(_) => {}
        }
    }
}
