//! Where the build's native products are, for the tests that compile C and C++ programs against
//! them: the profile directory this test binary was built in, and its libraries.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The crate's root directory.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/release` (or whichever profile directory this test binary was built in).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The modification time of a file, or of the newest file under a directory.
pub fn newest_mtime(path: &Path) -> SystemTime {
    if !path.is_dir() {
        return std::fs::metadata(path)
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("mtime of {}: {e}", path.display()));
    }
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(path).expect("read dir").flatten() {
        newest = newest.max(newest_mtime(&entry.path()));
    }
    newest
}

/// `name` (`libneardup.so`, `libneardup.a`) in the profile directory, refusing one older than
/// `src/` or `Cargo.toml`: `cargo test` does not rebuild it, `cargo build --release` does.
pub fn fresh_library(name: &str) -> PathBuf {
    let lib = profile_dir().join(name);
    let built = std::fs::metadata(&lib).and_then(|m| m.modified());
    let sources = newest_mtime(&root().join("src")).max(newest_mtime(&root().join("Cargo.toml")));
    match built {
        Ok(t) if t >= sources => lib,
        _ => panic!(
            "{} is missing or older than src/: build it with `cargo build --release` \
             (scripts/test.sh does) before running this test",
            lib.display()
        ),
    }
}
