//! `neardup-eval`: the evaluation harness of neardup, kept out of the product command line (and
//! its plotting dependency out of `neardup-tools`). It measures every method with the `neardup`
//! binary on the bench corpora and writes `docs/eval/`; see [`eval`].

mod eval;

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

/// Evaluate methods on the bench corpora (dev and natural-dev): each ingest in a child process
/// of the `neardup` command line (pages/s, peak memory, index size before and after
/// compaction), scored by the bench's scorers; writes a report (README.md), precision-recall
/// plots (SVG) and results.json, with the papers' comparisons (METHODS.md R1, R3, R4).
#[derive(Parser)]
#[command(version, long_about = None)]
struct Cli {
    /// `all`, or method names separated by commas (e.g. lcs,punct).
    #[arg(long, default_value = "all")]
    methods: String,
    /// The output folder.
    #[arg(long, default_value = "docs/eval")]
    out: PathBuf,
    /// The bench folder (dev/, natural-dev/, score.py).
    #[arg(long, default_value = "../shared/bench")]
    bench: PathBuf,
    /// Only the first 2,000 pages of each corpus (R4 on 290 and 985): for a test.
    #[arg(long)]
    quick: bool,
    /// The `neardup` binary to measure (default: the one beside this executable, which
    /// `cargo build --release -p neardup-tools` puts there).
    #[arg(long)]
    neardup: Option<PathBuf>,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    eval::run(&eval::EvalArgs {
        methods: cli.methods,
        out: cli.out,
        bench: cli.bench,
        quick: cli.quick,
        neardup: cli.neardup,
    })
}
