//! Crash consistency: a child process ingests and is killed with SIGKILL at random moments,
//! repeatedly. After each kill the index reopens, `check()` passes, and every page whose insert
//! returned before the kill is present.
mod common;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const CHILD_ENV: &str = "NEARDUP_CRASH_CHILD_DIR";

/// The writer: run only as a child of `crash_and_reopen` (it is `#[ignore]`d otherwise).
#[test]
#[ignore]
fn crash_writer_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let round: u64 = std::env::var("NEARDUP_CRASH_ROUND")
        .unwrap()
        .parse()
        .unwrap();
    let ix = open(&dir.join("index"));
    let mut acked = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("acked"))
        .unwrap();
    // A line the previous round's kill cut short ends here, not at this round's first line.
    acked.write_all(b"\n").unwrap();
    // Each line in one write, so a kill cuts it at most once.
    let mut note = |line: String| acked.write_all(line.as_bytes()).unwrap();
    for i in 0..10_000u64 {
        let base = article(round * 1000 + i % 37, 6);
        let text = if i % 3 == 0 { base } else { edited(&base, i) };
        let key = format!("r{round}-p{i}");
        let h = html(i as usize, "t", &text);
        ix.insert(&page(&key, "h", &h)).unwrap();
        if i % 7 == 6 {
            // Deletes too, so a kill can land inside a hand-over.
            let victim = format!("r{round}-p{}", i - 3);
            // Intent first: a kill between the delete and its acknowledgement leaves it unknown.
            note(format!("?{victim}$\n"));
            ix.delete(&victim).unwrap();
            note(format!("-{victim}$\n"));
        }
        note(format!("+{key}$\n"));
    }
}

#[test]
fn crash_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng(0xC0FFEE);
    for round in 0..5u64 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_writer_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .env("NEARDUP_CRASH_ROUND", round.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300 + rng.below(900) as u64));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let ix = open(&dir.path().join("index"));
        assert_clean(&ix);
        let acked = std::fs::read_to_string(dir.path().join("acked")).unwrap_or_default();
        let mut present: std::collections::HashMap<String, Option<bool>> =
            std::collections::HashMap::new();
        for line in acked.lines() {
            // A line cut by the kill (no closing `$`) is not an acknowledgement.
            let Some(line) = line.strip_suffix('$') else {
                continue;
            };
            if line.is_empty() {
                continue;
            }
            let (tag, k) = line.split_at(1);
            let state = match tag {
                "+" => Some(true),
                "-" => Some(false),
                _ => None,
            };
            present.insert(k.to_string(), state);
        }
        for (k, should) in &present {
            let Some(should) = should else { continue };
            let found = ix.id_of(k).unwrap().is_some();
            if *should {
                assert!(found, "round {round}: acknowledged page {k} is missing");
            } else {
                assert!(!found, "round {round}: acknowledged delete of {k} was lost");
            }
        }
    }
}
