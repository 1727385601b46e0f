//! `neardup._neardup.ArchiveReader`: web archives (WARC 1.0/1.1, ARC; gzip per record, whole, or
//! plain) read by the command line's reader (`neardup-input`), for `neardup.ray`'s S1 (issue #34,
//! item 3): blocks of records, each a page dict as a JSONL line gives it or the reason it is no
//! page, numbered by record.

use std::path::PathBuf;
use std::sync::Mutex;

use neardup_input::input::{self, Body, Limit, PageSource};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::invalid;

/// Content bytes a block holds at most, past its first page.
const BLOCK_BYTES: usize = 64 << 20;

/// A record of an archive as S1 reads it: its number and its page dict, or why it is no page.
type Row<'py> = (u64, Bound<'py, PyAny>);

/// The archive format of a file (``"warc"`` or ``"arc"``, gzip or plain), ``None`` when it is
/// not a web archive. Raises ``OSError`` when the file cannot be read.
#[pyfunction]
pub(crate) fn archive_format(path: PathBuf) -> PyResult<Option<&'static str>> {
    let (_, format) = input::sniff_file(&path).map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
    Ok(format.map(|f| match f {
        neardup_input::warc::Format::Warc => "warc",
        neardup_input::warc::Format::Arc => "arc",
    }))
}

/// A reader's page limit: ``max_page_bytes``, the signature option's default when ``None``;
/// ``InvalidArgumentError`` for 0.
pub(crate) fn page_limit(py: Python<'_>, max_page_bytes: Option<usize>) -> PyResult<usize> {
    let limit = max_page_bytes.unwrap_or(neardup::SignatureConfig::default().max_page_bytes);
    if limit == 0 {
        return Err(invalid(py, "max_page_bytes must be at least 1"));
    }
    Ok(limit)
}

/// The pages of a WARC or ARC file, read in blocks: ``next_block(pages)`` gives a list of
/// ``(record, row)`` in file order, ``record`` the record's number from 1, ``row`` a dict (``id``
/// the target URI, ``host``, ``time`` from ``WARC-Date``, ``html`` bytes or ``text``) or why the
/// record is no page (damaged, over ``max_page_bytes``, an undecodable payload), as ``neardup
/// ingest`` reports them; ``None`` at the end. Revisit records (unchanged recrawls: nothing to
/// do in a merge) and records that hold no page (requests, metadata, images...) are counted in
/// ``revisits`` and ``not_pages``.
#[pyclass(name = "ArchiveReader", module = "neardup._neardup")]
pub(crate) struct PyArchiveReader {
    /// Never locked (``next_block`` takes the reader mutably, so PyO3 refuses a second caller
    /// while one reads): the `Mutex` only makes the class `Sync`, as a `PageSource` is `Send`.
    source: Mutex<Box<dyn PageSource>>,
    revisits: u64,
    not_pages: u64,
}

#[pymethods]
impl PyArchiveReader {
    /// Opens ``path``; pages over ``max_page_bytes`` (the signature option's default when
    /// ``None``) are skipped. Raises ``InvalidArgumentError`` when it is not a WARC or ARC file,
    /// or ``max_page_bytes`` is 0; ``OSError`` when it cannot be read.
    #[new]
    #[pyo3(signature = (path, max_page_bytes=None))]
    fn new(py: Python<'_>, path: PathBuf, max_page_bytes: Option<usize>) -> PyResult<Self> {
        let max_page_bytes = page_limit(py, max_page_bytes)?;
        let (gzip, format) =
            input::sniff_file(&path).map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
        let Some(format) = format else {
            return Err(invalid(
                py,
                format!("{} is not a WARC or ARC file", path.display()),
            ));
        };
        let source = py
            .detach(|| input::open_archive(&path, gzip, format, max_page_bytes))
            .map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
        Ok(Self {
            source: Mutex::new(source),
            revisits: 0,
            not_pages: 0,
        })
    }

    /// Up to ``pages`` pages and 64 MiB of content (at least one page when any is left), with
    /// the records that are no page read on the way, in record order; ``None`` once the file is
    /// read. Damage found after record ``n`` is ``(n, "after record n: …")``.
    fn next_block<'py>(
        &mut self,
        py: Python<'py>,
        pages: usize,
    ) -> PyResult<Option<Vec<Row<'py>>>> {
        let source = self.source.get_mut().unwrap_or_else(|e| e.into_inner());
        if source.is_done() {
            return Ok(None);
        }
        // A byte budget as the command line's (past the first page): a block of large pages
        // stays a few tens of MiB, held twice at most while it becomes Python objects.
        let limit = Limit {
            pages: pages.max(1),
            bytes: BLOCK_BYTES,
        };
        let chunk = py.detach(|| source.next_chunk(limit));
        self.revisits += chunk.revisits.len() as u64;
        if let Some(report) = &chunk.report {
            self.not_pages += report.not_pages.values().sum::<u64>();
        }
        // (record, damage found after it?, row): a record's own problem or page first, then
        // the damage found after it (before the next record).
        let mut out: Vec<(u64, bool, Bound<'py, PyAny>)> =
            Vec::with_capacity(chunk.pages.len() + chunk.skips.len());
        for skip in chunk.skips {
            let at = input::record_number(&skip.place).unwrap_or(0);
            let after = skip.place.contains(" after record ");
            // Damage found after record n is no fault of record n: the reason says so, as a
            // JSONL read error says after which line it came.
            let reason = if after {
                format!("after record {at}: {}", skip.reason)
            } else {
                skip.reason
            };
            out.push((at, after, reason.into_pyobject(py)?.into_any()));
        }
        for (place, page) in chunk.pages {
            let d = PyDict::new(py);
            d.set_item("id", page.key)?;
            d.set_item("host", page.host)?;
            d.set_item("time", page.time)?;
            match page.body {
                Body::Html(h) => d.set_item("html", PyBytes::new(py, &h))?,
                Body::Text(t) => d.set_item("text", t)?,
            }
            let at = input::record_number(&place).unwrap_or(0);
            out.push((at, false, d.into_any()));
        }
        out.sort_by_key(|(at, after, _)| (*at, *after));
        let out = out.into_iter().map(|(at, _, row)| (at, row)).collect();
        Ok(Some(out))
    }

    /// Revisit records read so far (unchanged recrawls).
    #[getter]
    fn revisits(&self) -> u64 {
        self.revisits
    }

    /// Records read so far that hold no page (requests, metadata, resources that are no
    /// documents), counted once the file is read.
    #[getter]
    fn not_pages(&self) -> u64 {
        self.not_pages
    }
}
