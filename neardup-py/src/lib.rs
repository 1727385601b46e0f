//! `neardup._neardup`: the Python extension module of the `neardup` wheel (PyO3, abi3).
//!
//! Built on the library's public Rust API only. The Python package (`python/neardup`) wraps it:
//! `neardup.Index` subclasses [`index::PyIndex`] and adds the Arrow and dict batch front ends
//! (`insert_many`, `query_many`, `export`), the progress bar and the exceptions. Every call into
//! the library runs with the GIL released (`Python::detach`), so Python threads calling an index
//! or the signature functions run in parallel.

#![deny(unsafe_code)]

mod archive;
mod args;
mod components;
mod errors;
mod index;
mod jsonl;
mod options;
mod partition;
mod types;
mod wide;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rayon::prelude::*;

use errors::{invalid_type, IntoPy};
use neardup::{Content, SignatureConfig, VerifyConfig};

/// Page content copied out of Python objects, so that the library can work on it with the GIL
/// released.
pub(crate) enum Body {
    /// HTML as fetched (any encoding).
    Html(Vec<u8>),
    /// Plain text: each line a paragraph.
    Text(String),
}

impl Body {
    pub(crate) fn content(&self) -> Content<'_> {
        match self {
            Body::Html(h) => Content::Html(h),
            Body::Text(t) => Content::Text(t),
        }
    }

    /// The body of `html=` / `text=` arguments: exactly one of them. HTML is bytes (or a str,
    /// taken as UTF-8); text is a str.
    pub(crate) fn from_args(
        py: Python<'_>,
        html: Option<&Bound<'_, PyAny>>,
        text: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Body> {
        match (html.filter(|h| !h.is_none()), text.filter(|t| !t.is_none())) {
            (Some(h), None) => Body::html(h),
            (None, Some(t)) => Ok(Body::Text(
                t.cast::<PyString>()
                    .map_err(|_| {
                        invalid_type(py, format!("text must be a str, not {}", type_name(t)))
                    })?
                    .to_cow()?
                    .into_owned(),
            )),
            (Some(_), Some(_)) => Err(invalid_type(py, "give html or text, not both")),
            (None, None) => Err(invalid_type(
                py,
                "give the page's html (bytes) or text (str)",
            )),
        }
    }

    /// HTML from bytes, a bytearray, a memoryview-able object or a str (UTF-8).
    pub(crate) fn html(h: &Bound<'_, PyAny>) -> PyResult<Body> {
        if let Ok(b) = h.cast::<PyBytes>() {
            return Ok(Body::Html(b.as_bytes().to_vec()));
        }
        if let Ok(s) = h.cast::<PyString>() {
            return Ok(Body::Html(s.to_cow()?.into_owned().into_bytes()));
        }
        Ok(Body::Html(h.extract::<Vec<u8>>().map_err(|_| {
            invalid_type(
                h.py(),
                format!("html must be bytes or str, not {}", type_name(h)),
            )
        })?))
    }

    /// The bodies of a list of items (see [`Body::of_item`]).
    pub(crate) fn of_list(list: &Bound<'_, PyList>, is_html: bool) -> PyResult<Vec<Body>> {
        list.iter().map(|b| Body::of_item(&b, is_html)).collect()
    }

    /// A batch's body: bytes or str are HTML when `is_html`, else str is text.
    pub(crate) fn of_item(item: &Bound<'_, PyAny>, is_html: bool) -> PyResult<Body> {
        if is_html {
            Body::html(item)
        } else {
            Ok(Body::Text(
                item.cast::<PyString>()
                    .map_err(|_| {
                        invalid_type(
                            item.py(),
                            format!("text must be a str, not {}", type_name(item)),
                        )
                    })?
                    .to_cow()?
                    .into_owned(),
            ))
        }
    }
}

pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The signatures of one page, as an index computes them: the normalized main text, sentence
/// fingerprints, clause sketch, simhash, content hash and heading codes. Give ``html`` (bytes in
/// any encoding, or str) or ``text`` (str: each line a paragraph, no extraction). ``config``
/// overrides fields of the signature configuration (``SignatureConfig``: ``sketch_size``,
/// ``min_sentence_width``, ``method``...).
///
/// Raises ``PageTooLargeError``, ``BinaryPageError``, ``InvalidArgumentError``.
#[pyfunction]
#[pyo3(signature = (html=None, text=None, **config))]
fn signatures(
    py: Python<'_>,
    html: Option<&Bound<'_, PyAny>>,
    text: Option<&Bound<'_, PyAny>>,
    config: Option<&Bound<'_, PyDict>>,
) -> PyResult<types::Signatures> {
    let cfg: SignatureConfig = options::from_kwargs(py, config)?;
    let body = Body::from_args(py, html, text)?;
    let sig = py
        .detach(|| {
            cfg.validate()?;
            neardup::Signatures::compute(body.content(), &cfg)
        })
        .py(py)?;
    Ok(sig.into())
}

/// The main text of one page as a reader sees it (what ``neardup extract`` prints): a dict with
/// ``title``, ``heading``, ``text`` (as extracted, one paragraph a line, before normalization)
/// and ``lang`` (an ISO 639-3 code such as ``"eng"``, ``"cmn"``, ``"jpn"``; None when it cannot
/// be told). Give ``html`` (bytes in any encoding, or str) or ``text`` (str). ``config``
/// overrides fields of the signature configuration (``max_page_bytes``...).
///
/// Raises ``PageTooLargeError``, ``BinaryPageError``, ``InvalidArgumentError``.
#[pyfunction]
#[pyo3(signature = (html=None, text=None, **config))]
fn extract<'py>(
    py: Python<'py>,
    html: Option<&Bound<'py, PyAny>>,
    text: Option<&Bound<'py, PyAny>>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg: SignatureConfig = options::from_kwargs(py, config)?;
    let body = Body::from_args(py, html, text)?;
    let e = py
        .detach(|| {
            cfg.validate()?;
            neardup::extract_page(body.content(), &cfg)
        })
        .py(py)?;
    let d = PyDict::new(py);
    d.set_item("title", e.title)?;
    d.set_item("heading", e.heading)?;
    d.set_item("text", e.text)?;
    d.set_item("lang", e.lang)?;
    Ok(d)
}

/// Trustable-LCS verification of two normalized texts (``Signatures.text``): their resemble and
/// contain rates and whether they are similar under the thresholds. ``config`` overrides fields
/// of the verification configuration (``resemble_threshold``, ``contain_threshold``, ``theta``...).
#[pyfunction]
#[pyo3(signature = (a, b, **config))]
fn verify(
    py: Python<'_>,
    #[pyo3(from_py_with = args::a)] a: String,
    #[pyo3(from_py_with = args::b)] b: String,
    config: Option<&Bound<'_, PyDict>>,
) -> PyResult<types::Similarity> {
    let cfg: VerifyConfig = options::from_kwargs(py, config)?;
    let sim = py
        .detach(|| {
            cfg.validate()?;
            Ok(neardup::verify::verify(&a, &b, &cfg))
        })
        .py(py)?;
    Ok(sim.into())
}

/// The host part of a URL (``https://a.b/c`` gives ``a.b``), as the command line takes a page's
/// host when a record has a ``url`` but no ``host``.
#[pyfunction]
fn host_of(#[pyo3(from_py_with = args::url)] url: String) -> String {
    neardup::host_of(&url).to_string()
}

/// The signature columns of a batch (`neardup.signatures_table` builds its Arrow table from them):
/// `text`, `simhash`, `content_hash` (16 bytes, big-endian), `fingerprints` and `sketch` (16
/// bytes each, big-endian, concatenated), `codes`, `error`, and with `main_text` each page's
/// main text as `MainText::encode` gives it (`main_text`); computed in parallel with the GIL
/// released. `bodies` items are None (an error row), bytes or str.
#[pyfunction]
#[pyo3(signature = (bodies, is_html, config=None, main_text=false))]
fn _signatures_columns<'py>(
    py: Python<'py>,
    bodies: &Bound<'py, PyList>,
    is_html: bool,
    config: Option<&Bound<'py, PyDict>>,
    main_text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg: SignatureConfig = options::from_kwargs(py, config)?;
    cfg.validate().py(py)?;
    let mut owned: Vec<Result<Body, String>> = Vec::with_capacity(bodies.len());
    for item in bodies.iter() {
        owned.push(if item.is_none() {
            Err("no content".into())
        } else {
            Body::of_item(&item, is_html).map_err(|e| e.to_string())
        });
    }
    type Signed = (neardup::Signatures, Option<Vec<u8>>);
    let out: Vec<Result<Signed, String>> = py.detach(|| {
        owned
            .par_iter()
            .map(|b| match b {
                Ok(b) => neardup::Signatures::compute(b.content(), &cfg)
                    .map(|s| {
                        let main = main_text.then(|| s.main.encode());
                        (s, main)
                    })
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.clone()),
            })
            .collect()
    });
    let n = out.len();
    let mut text: Vec<Option<String>> = Vec::with_capacity(n);
    let mut simhash: Vec<Option<u64>> = Vec::with_capacity(n);
    let mut content_hash: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
    let mut fingerprints: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
    let mut sketch: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
    let mut codes: Vec<Option<Vec<u32>>> = Vec::with_capacity(n);
    let mut posting_keys: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
    let mut error: Vec<Option<String>> = Vec::with_capacity(n);
    let mut mains: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
    let packed = |v: &[u128]| -> Vec<u8> { v.iter().flat_map(|x| x.to_be_bytes()).collect() };
    for r in out {
        match r {
            Ok((s, main)) => {
                mains.push(main.map(|m| PyBytes::new(py, &m)));
                simhash.push(Some(s.simhash));
                content_hash.push(Some(PyBytes::new(py, &s.content_hash.to_be_bytes())));
                fingerprints.push(Some(PyBytes::new(py, &packed(&s.fingerprints))));
                sketch.push(Some(PyBytes::new(py, &packed(&s.sketch))));
                let keys: Vec<u8> = s.posting_keys(&cfg.method).concat();
                posting_keys.push(Some(PyBytes::new(py, &keys)));
                codes.push(Some(s.codes));
                text.push(Some(s.text));
                error.push(None);
            }
            Err(e) => {
                mains.push(None);
                text.push(None);
                simhash.push(None);
                content_hash.push(None);
                fingerprints.push(None);
                sketch.push(None);
                codes.push(None);
                posting_keys.push(None);
                error.push(Some(e));
            }
        }
    }
    let d = PyDict::new(py);
    d.set_item("text", text)?;
    d.set_item("simhash", simhash)?;
    d.set_item("content_hash", content_hash)?;
    d.set_item("fingerprints", fingerprints)?;
    d.set_item("sketch", sketch)?;
    d.set_item("codes", codes)?;
    d.set_item("posting_keys", posting_keys)?;
    d.set_item("error", error)?;
    if main_text {
        d.set_item("main_text", mains)?;
    }
    Ok(d)
}

/// The batch log (bytes) that takes a standing index from the state a scratch index was seeded
/// with (``before``, its ``state_log()`` after seeding) to the one its deletes and inserts left
/// (``after``), for a standing index whose live page and cluster counts were ``live_docs`` and
/// ``live_clusters`` when the batch started (SCALEOUT §5 S4.5 and S5).
#[pyfunction]
fn state_diff<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::before)] before: Vec<u8>,
    #[pyo3(from_py_with = args::after)] after: Vec<u8>,
    #[pyo3(from_py_with = args::live_docs)] live_docs: u64,
    #[pyo3(from_py_with = args::live_clusters)] live_clusters: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| -> neardup::Result<Vec<u8>> {
            let before = neardup::merge::decode_log(&before)?;
            let after = neardup::merge::decode_log(&after)?;
            let log =
                neardup::merge::state_diff(&before, &after).into_log(live_docs, live_clusters);
            Ok(neardup::merge::encode_log(&log))
        })
        .py(py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The extension module.
#[pymodule]
fn _neardup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SOURCE_ID", neardup::SOURCE_ID)?;
    m.add_class::<index::PyIndex>()?;
    m.add_class::<types::Verdict>()?;
    m.add_class::<types::Deletion>()?;
    m.add_class::<types::PageInfo>()?;
    m.add_class::<types::NearDuplicate>()?;
    m.add_class::<types::Signatures>()?;
    m.add_class::<types::Similarity>()?;
    m.add_class::<types::Change>()?;
    m.add_function(wrap_pyfunction!(types::_restore, m)?)?;
    m.add_function(wrap_pyfunction!(signatures, m)?)?;
    m.add_function(wrap_pyfunction!(extract, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(host_of, m)?)?;
    m.add_function(wrap_pyfunction!(_signatures_columns, m)?)?;
    m.add_function(wrap_pyfunction!(state_diff, m)?)?;
    m.add_class::<partition::PyLayout>()?;
    m.add_class::<wide::PyPartition>()?;
    m.add_function(wrap_pyfunction!(partition::combine_seed_logs, m)?)?;
    m.add_class::<partition::PyScratchIds>()?;
    m.add_function(wrap_pyfunction!(partition::scratch_seed, m)?)?;
    m.add_function(wrap_pyfunction!(partition::scratch_seed_files, m)?)?;
    m.add_function(wrap_pyfunction!(partition::combine_unit_logs, m)?)?;
    m.add_function(wrap_pyfunction!(partition::log_counters, m)?)?;
    m.add_function(wrap_pyfunction!(partition::remap_unit_log, m)?)?;
    m.add_function(wrap_pyfunction!(partition::route_unit_log_file, m)?)?;
    m.add_function(wrap_pyfunction!(partition::batch_counters, m)?)?;
    m.add_function(wrap_pyfunction!(partition::join_logs, m)?)?;
    m.add_function(wrap_pyfunction!(partition::join_log_files, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_partition_frequent, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_partition_check, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_partition_check_entries, m)?)?;
    // The distributed export (SCALEOUT §9 "Export").
    m.add_function(wrap_pyfunction!(partition::_export_asks, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_export_replies, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_export_cluster_replies, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_export_part, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_export_merge_tsv, m)?)?;
    m.add_function(wrap_pyfunction!(partition::_export_merge_columns, m)?)?;
    // S3's connected components (SCALEOUT §5 S3, §7.1).
    m.add_class::<components::PyComponents>()?;
    m.add_class::<components::PyProbeJoin>()?;
    m.add_class::<components::PyKeyStars>()?;
    m.add_class::<archive::PyArchiveReader>()?;
    m.add_class::<jsonl::PyJsonlReader>()?;
    m.add_function(wrap_pyfunction!(archive::archive_format, m)?)?;
    m.add_function(wrap_pyfunction!(components::close_simhash_pairs, m)?)?;
    Ok(())
}
