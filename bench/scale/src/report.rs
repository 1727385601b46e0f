//! `results.md` and `scale.svg` from the results.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::run::{Maint, Results, Step};

/// The machine and the build, for the record.
pub fn machine() -> serde_json::Value {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0);
    let commit = std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    serde_json::json!({
        "cpus": cpus,
        "cpu_model": model,
        "memory_gib": (mem as f64 / 1048576.0 * 10.0).round() / 10.0,
        "commit": commit,
        "neardup_version": env!("CARGO_PKG_VERSION"),
    })
}

fn maint_cell(m: &Maint) -> String {
    match m.status.as_str() {
        "ok" => format!("{:.1}", m.seconds),
        "timeout" => format!("> {:.0}", m.seconds),
        "skipped" => "–".into(),
        "pending" => "…".into(),
        _ => format!("failed ({})", m.detail.chars().take(60).collect::<String>()),
    }
}

fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The markdown report.
pub fn markdown(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# neardup scale bench\n");
    if let Some(st) = &r.settings {
        let _ = writeln!(
            s,
            "Label **{}**; seed {}, variant share {}, {} skeletons; probe batch {} pages; {} queries of each kind; growth batches of {} pages; sync_writes {}; sketch_fallback {}; maintenance deadline {} s.\n",
            st.label, st.seed, st.dup_share, st.skeletons, st.probe, st.queries, st.batch, st.sync_writes, st.sketch_fallback, st.maint_timeout
        );
    }
    let m = &r.machine;
    let _ = writeln!(
        s,
        "Machine: {} CPUs ({}), {} GiB; commit {}.\n",
        m["cpus"],
        m["cpu_model"].as_str().unwrap_or(""),
        m["memory_gib"],
        m["commit"].as_str().unwrap_or("")
    );
    let _ = writeln!(
        s,
        "Generator RSS before the index was opened: {:.0} MB (included in every RSS below).\n",
        r.generator["rss_mb"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(s, "## Speed\n");
    let _ = writeln!(
        s,
        "| pages held | probe pages/s | probe CPU µs/page | grow pages/s | grow CPU µs/page | open s | open + 1st query s | unrelated p50 / p99 µs | duplicates p50 / p99 µs | duplicates found | unrelated false dups |"
    );
    let _ = writeln!(
        s,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for st in &r.steps {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {} / {} | {} / {} | {} / {} | {} / {} |",
            thousands(st.pages as f64),
            thousands(st.probe.pages_per_s),
            thousands(st.probe.cpu_us_per_page),
            thousands(st.grow.pages_per_s),
            thousands(st.grow.cpu_us_per_page),
            st.open_s,
            st.open_first_query_s,
            thousands(st.query_unrelated.p50_us),
            thousands(st.query_unrelated.p99_us),
            thousands(st.query_duplicates.p50_us),
            thousands(st.query_duplicates.p99_us),
            st.duplicates_found,
            st.query_duplicates.n,
            st.unrelated_duplicates,
            st.query_unrelated.n,
        );
    }
    let _ = writeln!(s, "\n## Memory, disk, maintenance\n");
    let _ = writeln!(
        s,
        "| pages held | clusters | RSS MB | peak RSS MB (growing) | RSS reopened MB | filter / block cache MB | bytes/page | bytes/page w/o texts | checkpoint s | check s | compact_snapshot s | compact s |"
    );
    let _ = writeln!(
        s,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for st in &r.steps {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.1} | {} | {} | {:.2} | {} | {} | {} |",
            thousands(st.pages as f64),
            thousands(st.clusters as f64),
            st.rss_mb,
            st.peak_rss_mb,
            st.rss_reopened_mb,
            st.posting_filter_bytes as f64 / 1048576.0,
            thousands(st.bytes_per_page),
            thousands(st.bytes_per_page_without_texts),
            st.checkpoint_s,
            maint_cell(&st.check),
            maint_cell(&st.compact_snapshot),
            maint_cell(&st.online_compact),
        );
    }
    let _ = writeln!(s, "\n## Notes\n");
    for st in &r.steps {
        let _ = writeln!(
            s,
            "- {} pages: probe checkpoint {:.2} s, probe copy open {:.2} s, {} probe duplicates; query p90 unrelated {:.0} µs, duplicates {:.0} µs; disk {:.1} MB ({:.1} MB of texts); check: {}; compact_snapshot: {}{}.",
            thousands(st.pages as f64),
            st.probe_checkpoint_s,
            st.probe_open_s,
            st.probe.duplicates,
            st.query_unrelated.p90_us,
            st.query_duplicates.p90_us,
            st.dir_bytes as f64 / 1048576.0,
            st.texts_bytes as f64 / 1048576.0,
            if st.check.detail.is_empty() { st.check.status.clone() } else { format!("{} (open {:.1} s, CPU {:.0} s)", st.check.detail, st.check.open_s, st.check.cpu_s) },
            if st.compact_snapshot.detail.is_empty() { st.compact_snapshot.status.clone() } else { format!("{} (CPU {:.0} s)", st.compact_snapshot.detail, st.compact_snapshot.cpu_s) },
            if st.online_compact.status == "ok" || st.online_compact.status == "timeout" { format!("; compact: {}", st.online_compact.detail) } else { String::new() },
        );
    }
    s
}

type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    series: &[Series<'_>],
) -> anyhow::Result<()> {
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.0))
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(0.0, f64::max),
    );
    let y1 = ys.iter().cloned().fold(0.0, f64::max).max(1e-6) * 1.15;
    let (x0, x1) = if xs.is_empty() {
        (1e4, 1e6)
    } else {
        (x0 / 1.5, x1 * 1.5)
    };
    let e = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plot: {e:?}");
    let mut c = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d((x0..x1).log_scale(), 0.0..y1)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc("pages held")
        .y_desc(y_label)
        .x_label_formatter(&|x| {
            if *x >= 1e6 {
                format!("{:.1}M", x / 1e6)
            } else {
                format!("{:.0}k", x / 1e3)
            }
        })
        .draw()
        .map_err(e)?;
    for (name, color, pts) in series {
        let color = *color;
        c.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        c.draw_series(
            pts.iter()
                .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
        )
        .map_err(e)?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(e)?;
    Ok(())
}

/// The plot: probe pages/s, CPU µs a page, query latency and open time against pages held.
pub fn svg(r: &Results, path: &Path) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (1100, 760)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| anyhow::anyhow!("plot: {e:?}"))?;
    let areas = root.split_evenly((2, 2));
    let pts = |f: &dyn Fn(&Step) -> f64| -> Vec<(f64, f64)> {
        r.steps.iter().map(|s| (s.pages as f64, f(s))).collect()
    };
    let blue = RGBColor(31, 119, 180);
    let orange = RGBColor(255, 127, 14);
    let green = RGBColor(44, 160, 44);
    let red = RGBColor(214, 39, 40);
    panel(
        &areas[0],
        "Ingest (same probe batch)",
        "pages/s",
        &[
            ("probe pages/s", blue, pts(&|s| s.probe.pages_per_s)),
            ("growth pages/s", orange, pts(&|s| s.grow.pages_per_s)),
        ],
    )?;
    panel(
        &areas[1],
        "CPU a page",
        "µs",
        &[
            ("probe CPU µs/page", blue, pts(&|s| s.probe.cpu_us_per_page)),
            (
                "growth CPU µs/page",
                orange,
                pts(&|s| s.grow.cpu_us_per_page),
            ),
        ],
    )?;
    panel(
        &areas[2],
        "Query latency (one at a time)",
        "µs",
        &[
            ("unrelated p50", blue, pts(&|s| s.query_unrelated.p50_us)),
            ("unrelated p99", green, pts(&|s| s.query_unrelated.p99_us)),
            (
                "duplicates p50",
                orange,
                pts(&|s| s.query_duplicates.p50_us),
            ),
            ("duplicates p99", red, pts(&|s| s.query_duplicates.p99_us)),
        ],
    )?;
    panel(
        &areas[3],
        "Open",
        "ms",
        &[
            ("Index::open", blue, pts(&|s| s.open_s * 1e3)),
            (
                "open + first query",
                orange,
                pts(&|s| s.open_first_query_s * 1e3),
            ),
        ],
    )?;
    root.present().map_err(|e| anyhow::anyhow!("plot: {e:?}"))?;
    Ok(())
}

/// Writes results.md and scale.svg beside results.json.
pub fn write(r: &Results, out: &Path) -> anyhow::Result<()> {
    std::fs::write(out.join("results.md"), markdown(r))?;
    svg(r, &out.join("scale.svg"))
}
