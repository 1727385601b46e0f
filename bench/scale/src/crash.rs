//! Crash safety at scale: a child process ingests the stream into a fresh index (default
//! `IndexOptions`, so `sync_writes` on) with `insert_batch`, and after each batch that returned
//! writes the number of pages acknowledged so far to a side log, synced; the parent kills it
//! with SIGKILL in the middle of a batch once enough pages are acknowledged, then reopens the
//! index, runs `check`, and looks up every acknowledged page by its key.
//!
//! What the library promises (`Index::insert_batch`): every page of a batch that returned `Ok`
//! survives, and a group committed inside a batch survives a crash of the process; so after the
//! kill the index holds every acknowledged page (but those `insert_batch` refused), and of the
//! batch in flight some pages or none — nothing past it.
//!
//! The side log `DIR/acks` has one line per event, each written with one `write`:
//! `begin N` when the batch of pages `N..` goes to `insert_batch` (not synced: it only times the
//! kill), and `ack M [i,j,…]` once it returned, `M` pages acknowledged so far and the pages it
//! refused, if any, synced before the next batch is made. A line the kill cut short has no
//! newline and is ignored.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use neardup::{CheckReport, Content, Index, IndexOptions, Signatures};
use rand::{Rng, SeedableRng};

use crate::gen::{GenPage, Generator};
use crate::run::{log, pages_of, stream_config};
use crate::Inputs;

/// What the test is asked to do (from the command line).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Settings {
    /// Pages of the stream the child would ingest if never killed.
    pub pages: u64,
    /// Pages per `insert_batch`.
    pub batch: u64,
    /// The stream's seed.
    pub seed: u64,
    /// Share of variants in the stream.
    pub dup_share: f64,
    /// Skeletons kept from the dev corpus.
    pub skeletons: usize,
    /// Kill once this many pages are acknowledged.
    pub kill_at: Option<u64>,
    /// Or kill once the child has run this long (and acknowledged a batch).
    pub kill_after_secs: Option<u64>,
    /// Seed of the kill's moment inside the batch.
    pub kill_seed: u64,
    /// Acknowledged pages made again and compared with their stored records.
    pub verify_sample: usize,
}

/// What the test found (`DIR/crash.json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The settings.
    pub settings: Settings,
    /// The machine and build.
    pub machine: serde_json::Value,
    /// When the test ended (Unix seconds).
    pub at: u64,
    /// Seconds from the child's start to the kill.
    pub ingest_s: f64,
    /// The signal that ended the child (9 for the kill), or its exit code as a word.
    pub child_end: String,
    /// Pages acknowledged (the last `ack` line).
    pub acknowledged: u64,
    /// Of them, pages `insert_batch` refused (bad content): not expected in the index.
    pub refused: u64,
    /// The batch in flight at the kill (its first page), `None` when the kill fell between an
    /// acknowledgement and the next batch's start.
    pub in_flight_from: Option<u64>,
    /// Seconds from the observed start of the batch in flight to the kill.
    pub kill_into_batch_s: f64,
    /// The previous batch's `insert_batch`, seconds (what the kill's moment was drawn against).
    pub batch_s: f64,
    /// `Index::open_existing` after the kill, seconds (with the WAL's recovery).
    pub open_s: f64,
    /// `check()`, seconds.
    pub check_s: f64,
    /// What `check()` found (its first problems listed).
    pub check: CheckReport,
    /// `check().is_clean()`.
    pub check_clean: bool,
    /// Acknowledged pages found by their key (`id_of`).
    pub present_acknowledged: u64,
    /// Acknowledged pages not found (the first 100).
    pub missing: Vec<u64>,
    /// How many acknowledged pages were not found.
    pub missing_count: u64,
    /// Pages of the batch in flight found.
    pub present_in_flight: u64,
    /// `Index::len()` after the reopen.
    pub len: u64,
    /// Seconds looking up the acknowledged pages and those of the batch in flight.
    pub lookup_s: f64,
    /// Acknowledged pages made again and compared (host, time, content hash) with `get`.
    pub sampled: u64,
    /// Sampled pages whose record differs (the first 20, in words).
    pub sample_mismatches: Vec<String>,
    /// Everything wrong, in words; empty when the test passed.
    pub problems: Vec<String>,
    /// True when nothing is wrong.
    pub ok: bool,
}

/// The side log as read so far.
#[derive(Debug, Default, PartialEq)]
struct Acks {
    /// Pages acknowledged.
    acked: u64,
    /// Pages refused by the acknowledged batches.
    refused: Vec<u64>,
    /// The first page of the last batch begun.
    begun: Option<u64>,
}

impl Acks {
    fn parse(text: &str) -> anyhow::Result<Acks> {
        let mut a = Acks::default();
        // Only whole lines: the last one may have been cut by the kill.
        let whole = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => "",
        };
        for line in whole.lines() {
            let mut w = line.split_whitespace();
            match (w.next(), w.next().map(str::parse::<u64>)) {
                (Some("begin"), Some(Ok(n))) => a.begun = Some(n),
                (Some("ack"), Some(Ok(m))) => {
                    a.acked = m;
                    if let Some(list) = w.next() {
                        for i in list.split(',') {
                            a.refused.push(i.parse().context("a refused page")?);
                        }
                    }
                }
                _ => bail!("unreadable line in the acknowledgement log: {line:?}"),
            }
        }
        Ok(a)
    }

    fn read(path: &Path) -> anyhow::Result<Acks> {
        match std::fs::read_to_string(path) {
            Ok(t) => Acks::parse(&t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Acks::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// The batch in flight: begun and not acknowledged.
    fn in_flight(&self) -> Option<u64> {
        self.begun.filter(|&b| b >= self.acked)
    }
}

fn acks_path(dir: &Path) -> PathBuf {
    dir.join("acks")
}

/// The child: ingests the stream into `DIR/index` until killed (or done), logging each batch.
pub fn child(dir: &Path, s: &Settings, inputs: &Inputs) -> anyhow::Result<()> {
    let g = Generator::new(
        stream_config(s.seed, s.dup_share),
        &inputs.main,
        &inputs.skeletons,
    );
    let path = dir.join("index");
    let ix = Index::open(&path, IndexOptions::default())
        .with_context(|| format!("opening {}", path.display()))?;
    let mut acks = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(acks_path(dir))?;
    let started = Instant::now();
    let mut last_log = Instant::now();
    let mut next = 0u64;
    while next < s.pages {
        let n = s.batch.min(s.pages - next);
        let pages: Vec<GenPage> = (next..next + n).map(|i| g.page(i)).collect();
        acks.write_all(format!("begin {next}\n").as_bytes())?;
        let out = ix.insert_batch(
            &pages_of(&pages),
            &crate::run::batch_options(),
            &mut |_, _| {},
        )?;
        let refused: Vec<String> = out
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_err())
            .map(|(k, _)| (next + k as u64).to_string())
            .collect();
        next += n;
        acks.write_all(format!("ack {next} {}\n", refused.join(",")).as_bytes())?;
        acks.sync_data()?;
        if last_log.elapsed() > Duration::from_secs(30) {
            last_log = Instant::now();
            log(format!(
                "crash child: {next} pages acknowledged, {:.0} pages/s",
                next as f64 / started.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(())
}

/// When and how the child was killed.
struct Kill {
    ingest_s: f64,
    child_end: String,
    kill_into_batch_s: f64,
    batch_s: f64,
}

/// Runs the child and kills it in the middle of a batch once `kill_at` pages are acknowledged
/// (or `kill_after_secs` have passed).
fn run_and_kill(dir: &Path, s: &Settings, child_args: &[String]) -> anyhow::Result<Kill> {
    let acks = acks_path(dir);
    let exe = std::env::current_exe().context("the executable's path")?;
    let mut cmd = Command::new(exe);
    cmd.arg("crash-child")
        .arg("--dir")
        .arg(dir)
        .arg("--pages")
        .arg(s.pages.to_string())
        .arg("--batch")
        .arg(s.batch.to_string())
        .arg("--seed")
        .arg(s.seed.to_string())
        .arg("--dup-share")
        .arg(s.dup_share.to_string())
        .args(child_args)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    let t0 = Instant::now();
    let mut child = cmd.spawn().context("spawning the child")?;
    let outcome = watch(&mut child, &acks, s, t0);
    if outcome.is_err() {
        // Our own child, by its handle.
        let _ = child.kill();
        let _ = child.wait();
    }
    outcome
}

fn watch(child: &mut Child, acks: &Path, s: &Settings, t0: Instant) -> anyhow::Result<Kill> {
    use std::os::unix::process::ExitStatusExt;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.kill_seed);
    let mut seen = Acks::default();
    // When this process saw the last batch begin, and how long the last whole batch took.
    let mut begun_at: Option<(u64, Instant)> = None;
    let mut batch_s: Option<f64> = None;
    let mut kill_at: Option<Instant> = None;
    let mut last_log = Instant::now();
    loop {
        if let Some(st) = child.try_wait()? {
            bail!(
                "the child ended before the kill ({st}) with {} pages acknowledged",
                seen.acked
            );
        }
        let now = Instant::now();
        let a = Acks::read(acks)?;
        if a != seen {
            if a.acked > seen.acked {
                if let Some((b, at)) = begun_at {
                    if b < a.acked {
                        batch_s = Some(now.duration_since(at).as_secs_f64());
                    }
                }
            }
            if let Some(b) = a.in_flight() {
                if begun_at.is_none_or(|(was, _)| was != b) {
                    begun_at = Some((b, now));
                }
            }
            seen = a;
        }
        if last_log.elapsed() > Duration::from_secs(60) {
            last_log = Instant::now();
            log(format!(
                "crash: {} pages acknowledged after {:.0} s",
                seen.acked,
                t0.elapsed().as_secs_f64()
            ));
        }
        let armed = s.kill_at.is_some_and(|k| seen.acked >= k)
            || s.kill_after_secs
                .is_some_and(|k| seen.acked > 0 && t0.elapsed().as_secs() >= k);
        if armed && kill_at.is_none() {
            // A moment inside the next batch's insert_batch: a random fraction of the last
            // batch's time after the batch is seen to begin.
            if let (Some(b), Some((bb, at)), Some(d)) = (seen.in_flight(), begun_at, batch_s) {
                if b == bb {
                    let f: f64 = rng.random_range(0.1..0.9);
                    kill_at = Some(at + Duration::from_secs_f64(f * d));
                    log(format!(
                        "crash: {} pages acknowledged; the batch from {b} began, the kill comes {:.1} s into it ({:.0} % of the last batch's {d:.1} s)",
                        seen.acked,
                        f * d,
                        f * 100.0
                    ));
                }
            }
        }
        if let Some(k) = kill_at {
            if Instant::now() >= k {
                let ingest_s = t0.elapsed().as_secs_f64();
                let into = begun_at.map_or(0.0, |(_, at)| at.elapsed().as_secs_f64());
                // SIGKILL, to our own child, by its handle.
                child.kill().context("killing the child")?;
                let st = child.wait()?;
                let child_end = match st.signal() {
                    Some(sig) => format!("signal {sig}"),
                    None => format!("{st}"),
                };
                log(format!(
                    "crash: child killed {into:.2} s into the batch, after {ingest_s:.0} s ({child_end})"
                ));
                return Ok(Kill {
                    ingest_s,
                    child_end,
                    kill_into_batch_s: into,
                    batch_s: batch_s.unwrap_or(0.0),
                });
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The whole test: the child killed, the index reopened, checked and looked up. Writes
/// `DIR/crash.json`; an error when anything is wrong.
pub fn run(
    dir: &Path,
    s: Settings,
    child_args: &[String],
    load: impl FnOnce() -> anyhow::Result<Inputs>,
) -> anyhow::Result<()> {
    let index = dir.join("index");
    if index.exists() {
        bail!(
            "{} holds an index: the test needs a fresh one, remove it first",
            index.display()
        );
    }
    if let Some(k) = s.kill_at {
        if k + s.batch >= s.pages {
            bail!(
                "--kill-at {k} leaves no batch of {} pages to kill in --pages {}",
                s.batch,
                s.pages
            );
        }
    }
    std::fs::create_dir_all(dir)?;
    let acks = acks_path(dir);
    if acks.exists() {
        std::fs::remove_file(&acks)?;
    }
    log(format!(
        "crash: ingesting up to {} pages into {}, the kill at {} (kill seed {})",
        s.pages,
        index.display(),
        match (s.kill_at, s.kill_after_secs) {
            (Some(k), _) => format!("{k} pages acknowledged"),
            (None, Some(t)) => format!("{t} s"),
            (None, None) => "?".into(),
        },
        s.kill_seed
    ));
    let kill = run_and_kill(dir, &s, child_args)?;
    let a = Acks::read(&acks)?;
    let inputs = load()?;
    let g = Generator::new(
        stream_config(s.seed, s.dup_share),
        &inputs.main,
        &inputs.skeletons,
    );
    let mut problems = Vec::new();
    if kill.child_end != "signal 9" {
        problems.push(format!(
            "the child ended by {}, not SIGKILL",
            kill.child_end
        ));
    }

    let t = Instant::now();
    let ix = Index::open_existing(&index)
        .with_context(|| format!("reopening {} after the kill", index.display()))?;
    let open_s = t.elapsed().as_secs_f64();
    log(format!("crash: reopened in {open_s:.2} s; check…"));
    let t = Instant::now();
    let check = ix.check()?;
    let check_s = t.elapsed().as_secs_f64();
    let check_clean = check.is_clean();
    log(format!(
        "crash: check in {check_s:.1} s: {} pages, {} clusters, {} postings, {} problems",
        check.pages, check.clusters, check.postings, check.problem_count
    ));
    if !check_clean {
        for p in &check.problems {
            eprintln!("  check: {p}");
        }
        problems.push(format!(
            "check found {} problems (the first: {:?})",
            check.problem_count,
            check.problems.first()
        ));
    }

    // Every acknowledged page by its key; those of the batch in flight counted.
    let t = Instant::now();
    let refused: std::collections::HashSet<u64> = a.refused.iter().copied().collect();
    let (mut present_acknowledged, mut missing, mut missing_count) = (0u64, Vec::new(), 0u64);
    for i in 0..a.acked {
        let found = ix.id_of(&g.key(i))?.is_some();
        match (found, refused.contains(&i)) {
            (true, false) => present_acknowledged += 1,
            (false, false) => {
                missing_count += 1;
                if missing.len() < 100 {
                    missing.push(i);
                }
            }
            (true, true) => problems.push(format!("page {i} was refused, yet its key is held")),
            (false, true) => {}
        }
    }
    let flight_end = (a.acked + s.batch).min(s.pages);
    let mut present_in_flight = 0u64;
    for i in a.acked..flight_end {
        present_in_flight += u64::from(ix.id_of(&g.key(i))?.is_some());
    }
    let beyond = (flight_end..(flight_end + s.batch).min(s.pages))
        .filter(|&i| ix.id_of(&g.key(i)).is_ok_and(|x| x.is_some()))
        .count();
    let lookup_s = t.elapsed().as_secs_f64();
    let len = ix.len();
    log(format!(
        "crash: {present_acknowledged} of {} acknowledged pages present ({} refused), {present_in_flight} of the batch in flight; len {len}; looked up in {lookup_s:.1} s",
        a.acked,
        refused.len()
    ));
    if missing_count > 0 {
        problems.push(format!(
            "{missing_count} acknowledged pages missing (the first: {:?})",
            &missing[..missing.len().min(10)]
        ));
    }
    if beyond > 0 {
        problems.push(format!(
            "{beyond} pages of the batch after the one in flight are held"
        ));
    }
    let expected_min = a.acked - refused.len() as u64;
    if len < expected_min || len > expected_min + s.batch {
        problems.push(format!(
            "len {len} outside [{expected_min}, {}]",
            expected_min + s.batch
        ));
    }
    if len != present_acknowledged + present_in_flight {
        problems.push(format!(
            "len {len} is not the pages found by key ({present_acknowledged} acknowledged + {present_in_flight} in flight)"
        ));
    }

    // A sample of acknowledged pages made again and compared with their records: half from the
    // whole stream, half from the last acknowledged batch (the latest that must have survived).
    let mut sample_mismatches = Vec::new();
    let mut sampled = 0u64;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.kill_seed ^ 0x0005_a3b1);
    let last_batch = a.acked.saturating_sub(s.batch);
    let n = if a.acked == 0 { 0 } else { s.verify_sample };
    let candidates: Vec<u64> = (0..n)
        .map(|k| {
            let from = if k % 2 == 0 { 0 } else { last_batch };
            rng.random_range(from..a.acked)
        })
        .filter(|i| !refused.contains(i))
        .collect();
    let config = ix.options().signature.clone();
    for i in candidates {
        let p = g.page(i);
        let want = Signatures::compute(Content::Html(p.html.as_bytes()), &config)?.content_hash;
        sampled += 1;
        let diff = match ix.get(&p.key)? {
            None => Some("absent".to_string()),
            Some(r) if r.host != p.host || r.time != p.time || r.content_hash != want => {
                Some(format!(
                    "host {} time {} hash {:032x}, made again: host {} time {} hash {want:032x}",
                    r.host, r.time, r.content_hash, p.host, p.time
                ))
            }
            Some(_) => None,
        };
        if let Some(d) = diff {
            if sample_mismatches.len() < 20 {
                sample_mismatches.push(format!("page {i} ({}): {d}", p.key));
            }
        }
    }
    if !sample_mismatches.is_empty() {
        problems.push(format!(
            "{} of {sampled} sampled pages differ from their records",
            sample_mismatches.len()
        ));
    }

    let report = Report {
        machine: crate::report::machine(),
        at: now_unix(),
        ingest_s: kill.ingest_s,
        child_end: kill.child_end,
        acknowledged: a.acked,
        refused: refused.len() as u64,
        in_flight_from: a.in_flight(),
        kill_into_batch_s: kill.kill_into_batch_s,
        batch_s: kill.batch_s,
        open_s,
        check_s,
        check,
        check_clean,
        present_acknowledged,
        missing,
        missing_count,
        present_in_flight,
        len,
        lookup_s,
        sampled,
        sample_mismatches,
        ok: problems.is_empty(),
        problems,
        settings: s,
    };
    let out = dir.join("crash.json");
    std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
    println!(
        "crash at scale: {} pages acknowledged ({} refused) when killed ({}, {:.1} s into the batch from {}), {} present, {} missing, {} of the batch in flight; len {}; reopen {:.2} s; check {:.1} s, {}; {} sampled pages compared, {} differ → {}",
        report.acknowledged,
        report.refused,
        report.child_end,
        report.kill_into_batch_s,
        report
            .in_flight_from
            .map_or_else(|| "none".to_string(), |b| b.to_string()),
        report.present_acknowledged,
        report.missing_count,
        report.present_in_flight,
        report.len,
        report.open_s,
        report.check_s,
        if report.check_clean {
            "clean".to_string()
        } else {
            format!("{} problems", report.check.problem_count)
        },
        report.sampled,
        report.sample_mismatches.len(),
        out.display()
    );
    if !report.ok {
        for p in &report.problems {
            eprintln!("  problem: {p}");
        }
        bail!("the crash test failed: {}", report.problems.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_side_log_reads_whole_lines_only() {
        let a = Acks::parse("begin 0\nack 10 \nbegin 10\nack 20 13,17\nbegin 20\nack 3").unwrap();
        assert_eq!(a.acked, 20);
        assert_eq!(a.refused, vec![13, 17]);
        assert_eq!(a.in_flight(), Some(20));
        let b = Acks::parse("begin 0\nack 10 \n").unwrap();
        assert_eq!((b.acked, b.in_flight()), (10, None));
        assert_eq!(Acks::parse("").unwrap(), Acks::default());
        assert!(Acks::parse("what\n").is_err());
    }
}
