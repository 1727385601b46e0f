//! Crash consistency: a child process runs a random mix of inserts, batches, replaces, deletes
//! (of members and of representatives), checkpoints and compactions, and is killed with SIGKILL
//! at a random moment, round after round, with `sync_writes` on and off. After each kill the
//! index reopens, `check()` passes, the clusters hold together as the public API shows them, and
//! every operation the child acknowledged is there: each acknowledged insert or replace with its
//! content hash, each acknowledged delete absent, each acknowledged checkpoint a clean index
//! holding what was acknowledged before it. A kill loses nothing acknowledged in either sync
//! mode (off, the WAL is written before a call returns, only not synced). And the change feed
//! is what was committed: a copy that applies it after every kill holds what the index holds.
//!
//! The test runs `NEARDUP_CRASH_ROUNDS` rounds per sync mode (5 by default);
//! `scripts/soak-crash.sh ROUNDS` runs the long soak and prints its figures.
mod common;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use neardup::{BatchOptions, BatchOrder, Content, Index, IndexOptions, OrderScope, Signatures};

const CHILD_ENV: &str = "NEARDUP_CRASH_CHILD_DIR";
const ROUND_ENV: &str = "NEARDUP_CRASH_ROUND";
const SYNC_ENV: &str = "NEARDUP_CRASH_SYNC";
const ROUNDS_ENV: &str = "NEARDUP_CRASH_ROUNDS";

/// Live pages the child steers towards: past it, inserts turn into deletes, so the index (and
/// the time a round's checks take) stays bounded however long the soak.
const TARGET_PAGES: usize = 1200;

/// Article families: pages of a family are near duplicates of one another, so clusters grow
/// members and a deleted representative hands over.
const FAMILIES: u64 = 80;

/// The side log of round `round`: one line per intent (`?`) and per acknowledgement (`+`).
fn log_path(dir: &Path, round: u64) -> PathBuf {
    dir.join(format!("log-{round}"))
}

/// The side log: each line is written in one `write` and synced after the call it records has
/// returned; a line cut by the kill lacks its closing `$` and is ignored.
struct SideLog(std::fs::File);

impl SideLog {
    fn note(&mut self, lines: &str) {
        self.0.write_all(lines.as_bytes()).unwrap();
        self.0.sync_data().unwrap();
    }
}

/// A page's HTML: a window of a family's article, as is or edited (windows far apart share
/// little, so a member may verify against one representative and not the next); now and then an
/// unrelated article or a page without main text.
fn content(rng: &mut Rng) -> (String, String) {
    let f = rng.below(FAMILIES as usize) as u64;
    let host = format!("h{}.example", f % 7);
    let paras = match rng.below(20) {
        0 => return (host, "<html><body><p>Moved.</p></body></html>".to_string()),
        1..=3 => article(100_000 + rng.next() % 1_000_000, 5),
        n => {
            let whole = article(7_000 + f, 10);
            let start = rng.below(5);
            let window = &whole[start..start + 4 + rng.below(2)];
            if n % 2 == 0 {
                window.to_vec()
            } else {
                edited(window, rng.next())
            }
        }
    };
    let template = rng.below(3);
    (host, html(template, &format!("Story {f}"), &paras))
}

/// The writer: run only as a child of `crash_soak` (it is `#[ignore]`d otherwise). Runs until
/// it is killed.
#[test]
#[ignore]
fn crash_writer_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let round: u64 = std::env::var(ROUND_ENV).unwrap().parse().unwrap();
    let sync_writes = std::env::var(SYNC_ENV).unwrap() == "1";
    let ix = Index::open(
        dir.join("index"),
        IndexOptions {
            sync_writes,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    workload(&ix, &dir, round, sync_writes, 1_000_000);
}

/// Round `round` of the writer's random operations on `ix`, at most `ops` of them, each noted in
/// the round's side log in `dir`.
fn workload(ix: &Index, dir: &Path, round: u64, sync_writes: bool, ops: u64) {
    let mut log = SideLog(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path(dir, round))
            .unwrap(),
    );
    let mut rng = Rng(0x5EED_0000 ^ (round << 8) ^ u64::from(sync_writes));
    // The live keys (the parent reconciled the index with the log before this round).
    let mut live: Vec<String> = ix.keys().unwrap().map(|r| r.unwrap().0).collect();
    let mut slot: HashMap<String, usize> = live
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();
    let add = |live: &mut Vec<String>, slot: &mut HashMap<String, usize>, k: &str| {
        if !slot.contains_key(k) {
            slot.insert(k.to_string(), live.len());
            live.push(k.to_string());
        }
    };
    let take = |live: &mut Vec<String>, slot: &mut HashMap<String, usize>, k: &str| {
        let i = slot.remove(k).unwrap();
        live.swap_remove(i);
        if i < live.len() {
            slot.insert(live[i].clone(), i);
        }
    };
    let expected_hash = |h: &str| {
        Signatures::compute(Content::Html(h.as_bytes()), &ix.options().signature)
            .unwrap()
            .content_hash
    };
    let stored_hash = |k: &str, expected: u128| {
        let got = ix
            .get(k)
            .unwrap()
            .expect("an inserted page is present")
            .content_hash;
        assert_eq!(
            got, expected,
            "{k}: stored content hash differs from the page's"
        );
        got
    };
    let mut fresh = 0u64;
    for n in 0..ops {
        let mut new_key = || {
            fresh += 1;
            format!("r{round}-{fresh}")
        };
        let mut op = rng.below(100);
        if live.len() > TARGET_PAGES && op < 30 && rng.below(2) == 0 {
            op = 60; // a delete instead of an insert
        }
        if live.is_empty() && (15..90).contains(&op) {
            op = 0;
        }
        match op {
            // Insert under a new key (0..30), or replace a live key's page (30..45).
            0..=44 => {
                let replace = op >= 30;
                let key = if replace {
                    live[rng.below(live.len())].clone()
                } else {
                    new_key()
                };
                let kind = if replace { "rep" } else { "ins" };
                let (host, h) = content(&mut rng);
                let hash = expected_hash(&h);
                log.note(&format!("? {kind} {key} {hash:x}$\n"));
                let p = neardup::Page {
                    key: &key,
                    host: &host,
                    time: n as i64,
                    content: Content::Html(h.as_bytes()),
                };
                let v = ix.insert(&p).unwrap();
                assert_eq!(v.replaced || v.unchanged, replace, "{key}: {v:?}");
                let got = stored_hash(&key, hash);
                log.note(&format!("+ {kind} {key} {got:x}$\n"));
                add(&mut live, &mut slot, &key);
            }
            // A batch of new and replaced pages (distinct keys), committed in small groups.
            45..=54 => {
                let n_pages = 2 + rng.below(24);
                let mut keys: Vec<String> = Vec::new();
                let mut seen = HashSet::new();
                for _ in 0..n_pages {
                    // Past the target, a batch replaces pages rather than adding new ones.
                    let k = if !live.is_empty() && (live.len() > TARGET_PAGES || rng.below(3) == 0)
                    {
                        live[rng.below(live.len())].clone()
                    } else {
                        new_key()
                    };
                    if seen.insert(k.clone()) {
                        keys.push(k);
                    }
                }
                let bodies: Vec<(String, String)> =
                    keys.iter().map(|_| content(&mut rng)).collect();
                let hashes: Vec<u128> = bodies.iter().map(|(_, h)| expected_hash(h)).collect();
                let mut intent = String::new();
                for (k, hash) in keys.iter().zip(&hashes) {
                    intent.push_str(&format!("? bat {k} {hash:x}$\n"));
                }
                log.note(&intent);
                let pages: Vec<neardup::Page<'_>> = keys
                    .iter()
                    .zip(&bodies)
                    .map(|(k, (host, h))| neardup::Page {
                        key: k,
                        host,
                        time: n as i64,
                        content: Content::Html(h.as_bytes()),
                    })
                    .collect();
                // Every order an insert may run under (the whole-batch scope sorts, so it goes
                // with the fingerprint order only).
                let (order, scope) = [
                    (BatchOrder::Input, OrderScope::Window),
                    (BatchOrder::FingerprintCount, OrderScope::Window),
                    (BatchOrder::FingerprintCount, OrderScope::Batch),
                ][rng.below(3)];
                let opts = BatchOptions {
                    order,
                    scope,
                    group: 1 + rng.below(8),
                    window: 4 + rng.below(16),
                };
                let results = ix.insert_batch(&pages, &opts, &mut |_, _| {}).unwrap();
                let mut ack = String::new();
                for ((k, hash), r) in keys.iter().zip(&hashes).zip(results) {
                    r.unwrap();
                    let got = stored_hash(k, *hash);
                    ack.push_str(&format!("+ bat {k} {got:x}$\n"));
                }
                ack.push_str(&format!("+ batch {}$\n", keys.len()));
                log.note(&ack);
                for k in &keys {
                    add(&mut live, &mut slot, k);
                }
            }
            // Delete a page picked at random (mostly members: 55..70), or a representative.
            55..=79 => {
                let picked = live[rng.below(live.len())].clone();
                let key = if op >= 70 {
                    ix.get(&picked).unwrap().unwrap().representative
                } else {
                    picked
                };
                log.note(&format!("? del {key}$\n"));
                let d = ix.delete(&key).unwrap();
                let role = if d.was_representative { "rep" } else { "mem" };
                log.note(&format!("+ del {key} {role} {}$\n", d.moved.len()));
                take(&mut live, &mut slot, &key);
            }
            80 => {
                let cp = dir.join(format!("cp-{round}-{n}"));
                log.note(&format!("? cp {}$\n", cp.display()));
                ix.checkpoint(&cp).unwrap();
                log.note(&format!("+ cp {}$\n", cp.display()));
            }
            81 => {
                log.note("? cmp$\n");
                ix.compact().unwrap();
                log.note("+ cmp$\n");
            }
            // The rest: inserts under new keys.
            _ => {
                let key = new_key();
                let (host, h) = content(&mut rng);
                let hash = expected_hash(&h);
                log.note(&format!("? ins {key} {hash:x}$\n"));
                let p = neardup::Page {
                    key: &key,
                    host: &host,
                    time: n as i64,
                    content: Content::Html(h.as_bytes()),
                };
                ix.insert(&p).unwrap();
                let got = stored_hash(&key, hash);
                log.note(&format!("+ ins {key} {got:x}$\n"));
                add(&mut live, &mut slot, &key);
            }
        }
    }
}

/// What a key may be after the kill: each possibility is a content hash or absence (`None`).
/// One possibility once acknowledged; more while an operation on it was in flight.
type Model = HashMap<String, Vec<Option<u128>>>;

/// The soak's figures for one sync mode.
#[derive(Default)]
struct Figures {
    rounds: u64,
    /// Rounds killed before the child acknowledged anything (in open or recovery).
    killed_before_first_ack: u64,
    inserts: u64,
    replaces: u64,
    batches: u64,
    batch_pages: u64,
    deletes_member: u64,
    deletes_representative: u64,
    members_moved: u64,
    checkpoints: u64,
    /// Pages found with their hash in the acknowledged checkpoints.
    checkpoint_pages_verified: u64,
    compactions: u64,
    /// Keys with an operation in flight at the kill, found applied / not applied.
    in_flight_applied: u64,
    in_flight_not_applied: u64,
    /// Checks after the kills: pages found with their acknowledged hash, deletes found absent.
    verified_present: u64,
    verified_absent: u64,
    /// Pairs (representative, member) verified similar through `explain`.
    verified_members: u64,
    pages_at_end: u64,
    clusters_at_end: u64,
    /// Changes of the feed a copy applied after the kills.
    changes_followed: u64,
}

fn rounds() -> u64 {
    std::env::var(ROUNDS_ENV)
        .ok()
        .map(|r| r.parse().expect("NEARDUP_CRASH_ROUNDS is a number"))
        .unwrap_or(5)
}

#[test]
fn crash_soak() {
    for sync_writes in [true, false] {
        let t0 = Instant::now();
        let f = soak(sync_writes, rounds());
        eprintln!("{}", report(&f, sync_writes, t0.elapsed()));
    }
}

/// The figures in words (what `scripts/soak-crash.sh` prints).
fn report(f: &Figures, sync_writes: bool, took: Duration) -> String {
    format!(
        "crash soak, sync_writes {}: {} rounds survived in {:.0} s ({} killed before the first \
         acknowledgement)\n  \
         acknowledged: {} inserts, {} replaces, {} pages in {} batches, {} deletes ({} of \
         members, {} of representatives, {} members moved), {} checkpoints, {} compactions\n  \
         in flight at the kills: {} keys ({} applied, {} not)\n  \
         verified after the kills: {} page states present with their acknowledged hash, {} \
         acknowledged deletes absent, {} member/representative pairs similar, {} pages in {} \
         checkpoints; lost: 0\n  \
         change feed: {} changes applied to a copy, the same pages and clusters after every kill\n  \
         at the end: {} pages in {} clusters",
        if sync_writes { "on" } else { "off" },
        f.rounds,
        took.as_secs_f64(),
        f.killed_before_first_ack,
        f.inserts,
        f.replaces,
        f.batch_pages,
        f.batches,
        f.deletes_member + f.deletes_representative,
        f.deletes_member,
        f.deletes_representative,
        f.members_moved,
        f.checkpoints,
        f.compactions,
        f.in_flight_applied + f.in_flight_not_applied,
        f.in_flight_applied,
        f.in_flight_not_applied,
        f.verified_present,
        f.verified_absent,
        f.verified_members,
        f.checkpoint_pages_verified,
        f.checkpoints,
        f.changes_followed,
        f.pages_at_end,
        f.clusters_at_end,
    )
}

fn soak(sync_writes: bool, rounds: u64) -> Figures {
    // `NEARDUP_CRASH_KEEP=1` keeps the index and the side logs for a look after a failure.
    let (_guard, dir) = if std::env::var_os("NEARDUP_CRASH_KEEP").is_some() {
        let kept = tempfile::tempdir().unwrap().keep();
        eprintln!("crash soak: keeping {}", kept.display());
        (None, kept)
    } else {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().to_path_buf();
        (Some(t), p)
    };
    let dir = dir.as_path();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng(0xC0FFEE ^ u64::from(sync_writes));
    let mut model = Model::new();
    let mut fig = Figures::default();
    // A copy that follows the index's change feed after every kill.
    let follower = Index::open(
        dir.join("follower"),
        IndexOptions {
            sync_writes: false,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_writer_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir)
            .env(ROUND_ENV, round.to_string())
            .env(SYNC_ENV, if sync_writes { "1" } else { "0" })
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(format!("stderr-{round}"))).unwrap())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100 + rng.below(1100) as u64));
        if let Some(status) = child.try_wait().unwrap() {
            let err = std::fs::read_to_string(dir.join(format!("stderr-{round}")));
            panic!("round {round}: the writer stopped by itself ({status}):\n{err:?}");
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        fig.rounds += 1;

        let checkpoints = replay(&log_path(dir, round), &mut model, &mut fig);
        let ix = open(&dir.join("index"));
        assert_clean(&ix);
        verify(&ix, &mut model, &mut fig, round, "the index");
        assert_clusters(&ix, &mut fig, round);
        follow(&ix, &follower, &mut fig, round);
        if round + 1 == rounds {
            fig.pages_at_end = ix.len();
            fig.clusters_at_end = ix.clusters().unwrap().count() as u64;
        }
        drop(ix); // the next child opens it
        for (cp, at) in checkpoints {
            if let Some(mut at) = at {
                let snap = Index::open_read_only(&cp).unwrap();
                assert_clean(&snap);
                let mut f = Figures::default();
                verify(&snap, &mut at, &mut f, round, &cp.display().to_string());
                fig.checkpoints += 1;
                fig.checkpoint_pages_verified += f.verified_present;
            }
            // Unacknowledged ones too: a kill may leave one half written.
            let _ = std::fs::remove_dir_all(&cp);
        }
    }
    fig
}

/// Applies round's side log to the model. Returns the checkpoints it names, each with the model
/// as of its start when it was acknowledged.
fn replay(log: &Path, model: &mut Model, fig: &mut Figures) -> Vec<(PathBuf, Option<Model>)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut checkpoints: Vec<(PathBuf, Option<Model>)> = Vec::new();
    let mut acks = 0;
    for line in text.lines() {
        // A line cut by the kill (no closing `$`) records nothing.
        let Some(line) = line.strip_suffix('$') else {
            continue;
        };
        let w: Vec<&str> = line.split(' ').collect();
        let hash = |s: &str| Some(u128::from_str_radix(s, 16).unwrap());
        if w[0] == "+" {
            acks += 1;
        }
        match (w[0], w[1]) {
            ("?", "ins" | "rep" | "bat") => model
                .entry(w[2].to_string())
                .or_insert_with(|| vec![None])
                .push(hash(w[3])),
            ("+", "ins" | "rep" | "bat") => {
                model.insert(w[2].to_string(), vec![hash(w[3])]);
                match w[1] {
                    "ins" => fig.inserts += 1,
                    "rep" => fig.replaces += 1,
                    _ => fig.batch_pages += 1,
                }
            }
            ("+", "batch") => fig.batches += 1,
            ("?", "del") => model
                .entry(w[2].to_string())
                .or_insert_with(|| vec![None])
                .push(None),
            ("+", "del") => {
                model.insert(w[2].to_string(), vec![None]);
                if w[3] == "rep" {
                    fig.deletes_representative += 1;
                } else {
                    fig.deletes_member += 1;
                }
                fig.members_moved += w[4].parse::<u64>().unwrap();
            }
            ("?", "cp") => checkpoints.push((PathBuf::from(w[2]), None)),
            ("+", "cp") => {
                let last = checkpoints.last_mut().unwrap();
                assert_eq!(last.0, PathBuf::from(w[2]));
                // Operations are sequential: when the checkpoint started, every one before it
                // was acknowledged, and the model of that moment is exact.
                last.1 = Some(model.clone());
            }
            ("?", "cmp") => {}
            ("+", "cmp") => fig.compactions += 1,
            _ => panic!("{}: unknown side-log line {line:?}", log.display()),
        }
    }
    if acks == 0 {
        fig.killed_before_first_ack += 1;
    }
    // A checkpoint's model was taken at its acknowledgement; the model at its start is the same
    // (nothing ran between), except for keys first seen later, which must be absent from it.
    for (_, at) in checkpoints.iter_mut() {
        if let Some(at) = at {
            for (k, _) in model.iter() {
                at.entry(k.clone()).or_insert_with(|| vec![None]);
            }
        }
    }
    checkpoints
}

/// Checks every key of the model against the index: present with an allowed hash, or absent
/// when that is allowed; no key the model does not know. Settles the model to what was found.
fn verify(ix: &Index, model: &mut Model, fig: &mut Figures, round: u64, what: &str) {
    for (k, allowed) in model.iter_mut() {
        let found = ix.get(k).unwrap().map(|r| r.content_hash);
        assert!(
            allowed.contains(&found),
            "round {round}, {what}: {k} is {found:x?}, allowed {allowed:x?} \
             (an acknowledged operation was lost)"
        );
        if allowed.len() > 1 {
            if found == *allowed.last().unwrap() && !allowed[..allowed.len() - 1].contains(&found) {
                fig.in_flight_applied += 1;
            } else {
                fig.in_flight_not_applied += 1;
            }
        } else if found.is_some() {
            fig.verified_present += 1;
        } else {
            fig.verified_absent += 1;
        }
        *allowed = vec![found];
    }
    let mut n = 0;
    for r in ix.keys().unwrap() {
        let (k, _) = r.unwrap();
        assert!(
            model.contains_key(&k),
            "round {round}, {what}: {k} is present but was never inserted"
        );
        n += 1;
    }
    assert_eq!(
        n,
        ix.len(),
        "round {round}, {what}: keys() and len() disagree"
    );
    // Absent keys are settled now: forget them so the model stays as small as the index.
    model.retain(|_, a| a[0].is_some());
}

/// The change feed after a kill matches what was committed: a copy that applies the changes
/// since the last it applied (their numbers following one another, across the kills) holds
/// what the index holds — the same export, clusters and records.
fn follow(ix: &Index, follower: &Index, fig: &mut Figures, round: u64) {
    let mut last = follower.last_change();
    for c in ix.changes_since(last).unwrap() {
        let c = c.unwrap();
        assert_eq!(c.seq, last + 1, "round {round}: the feed skips");
        follower
            .apply_change(&c)
            .unwrap_or_else(|e| panic!("round {round}: change {}: {e}", c.seq));
        last = c.seq;
        fig.changes_followed += 1;
    }
    assert_eq!(last, ix.last_change(), "round {round}");
    assert_eq!(
        exports(follower),
        exports(ix),
        "round {round}: the copy differs"
    );
    let pages =
        |i: &Index| -> Vec<neardup::Record> { i.pages().unwrap().map(|p| p.unwrap()).collect() };
    assert_eq!(
        pages(follower),
        pages(ix),
        "round {round}: the copy's records differ"
    );
}

/// The clusters as the public API shows them: each representative a member, each member
/// pointing at its cluster and representative, sizes adding up to the pages; and every member
/// verifies against its representative.
fn assert_clusters(ix: &Index, fig: &mut Figures, round: u64) {
    let mut total = 0;
    for c in ix.clusters().unwrap() {
        let c = c.unwrap();
        let members: Vec<String> = ix
            .members(c.cluster)
            .unwrap()
            .unwrap()
            .map(|m| m.unwrap())
            .collect();
        assert_eq!(members.len() as u64, c.size, "round {round}: cluster {c:?}");
        assert!(
            members.contains(&c.representative),
            "round {round}: representative of {c:?} is not a member"
        );
        for m in &members {
            let r = ix.get(m).unwrap().unwrap();
            assert_eq!(r.cluster, c.cluster, "round {round}: {m}");
            assert_eq!(r.representative, c.representative, "round {round}: {m}");
            if *m != c.representative {
                let e = ix.explain(&c.representative, m).unwrap();
                assert!(
                    e.duplicate,
                    "round {round}: member {m} of {c:?} does not verify against it: {}",
                    e.rule
                );
                fig.verified_members += 1;
            }
        }
        total += c.size;
    }
    assert_eq!(total, ix.len(), "round {round}: cluster sizes and pages");
}
