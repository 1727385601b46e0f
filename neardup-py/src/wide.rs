//! `neardup._neardup.Partition`: a handle on one format 7 partition of a distributed index
//! (Rust `merge::WidePartition`; SCALEOUT §4, issue #34 item 5), page and cluster ids global
//! `u64`s. What `neardup.ray`'s partition actors call: batch logs applied, the look-ups of
//! S0–S3, the rows of the export, checkpoints.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::args;
use crate::errors::{invalid, IntoPy};
use neardup::merge::{encode_log, ApplyOutcome, Partition, Role, WidePartition};
use neardup::IndexOptions;

/// `role` (``"key"`` or ``"doc"``) and `part` as a partition's role.
pub(crate) fn role_of(py: Python<'_>, role: &str, part: u32) -> PyResult<Role> {
    match role {
        "key" => Ok(Role::Key(part)),
        "doc" => Ok(Role::Doc(part)),
        other => Err(invalid(
            py,
            format!("role must be \"key\" or \"doc\", not {other:?}"),
        )),
    }
}

/// A partition's place as Python sees it: ``(role, part, key_parts, doc_parts)``.
pub(crate) fn place_of(p: Partition) -> (&'static str, u32, u32, u32) {
    let (role, n) = match p.role {
        Role::Key(n) => ("key", n),
        Role::Doc(n) => ("doc", n),
    };
    (role, n, p.layout.key_parts(), p.layout.doc_parts())
}

/// One partition of a distributed index with ``u64`` page and cluster ids (on-disk format 7,
/// FORMAT.md "Format 7: partitions with 64-bit ids"), written only by batch logs.
///
/// ``Partition(path, layout, role, part, **options)`` creates partition ``part`` of kind
/// ``role`` (``"key"`` or ``"doc"``) of ``layout`` in a new or empty directory, with the index
/// options of ``neardup.Index`` (signature, simhash distance, texts, memory budget); a
/// directory that holds a partition already is opened with its stored configuration (of
/// ``options`` only the memory budget counts), and must be that partition of that layout
/// (``InvalidArgumentError`` otherwise). A single-node index or a partition of ``u32`` ids
/// (``neardup.Index``'s) raises ``IncompatibleFormatError``, nothing written.
/// ``read_only=True`` opens an existing partition read-only (no options).
#[pyclass(frozen, name = "Partition", module = "neardup._neardup")]
pub(crate) struct PyPartition {
    /// The partition, until `close()` (as `PyIndex`'s).
    inner: RwLock<Option<Arc<WidePartition>>>,
    path: PathBuf,
}

impl PyPartition {
    /// The open partition, or `InvalidArgumentError` once closed.
    pub(crate) fn part(&self, py: Python<'_>) -> PyResult<Arc<WidePartition>> {
        self.inner.read().clone().ok_or_else(|| {
            invalid(
                py,
                format!("the partition at {} is closed", self.path.display()),
            )
        })
    }
}

/// Whether an apply wrote the batch.
fn applied(outcome: ApplyOutcome) -> bool {
    matches!(outcome, ApplyOutcome::Applied { .. })
}

/// Sets of ids as lists.
fn lists<S: IntoIterator<Item = u64>>(sets: Vec<S>) -> Vec<Vec<u64>> {
    sets.into_iter().map(|s| s.into_iter().collect()).collect()
}

#[pymethods]
impl PyPartition {
    #[new]
    #[pyo3(signature = (path, layout, role, part, /, *, read_only=false, **options))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = args::path)] path: PathBuf,
        layout: &crate::partition::PyLayout,
        #[pyo3(from_py_with = args::role)] role: String,
        #[pyo3(from_py_with = args::part)] part: u32,
        #[pyo3(from_py_with = args::read_only)] read_only: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = crate::index::index_options(py, options)?;
        if read_only && opts.is_some() {
            return Err(invalid(
                py,
                "a read-only partition is opened with its stored configuration: give no options",
            ));
        }
        let wanted = Partition::new(layout.inner, role_of(py, &role, part)?).py(py)?;
        let p = path.clone();
        let wp = py
            .detach(move || {
                let opts = opts.unwrap_or_else(IndexOptions::default);
                if read_only {
                    WidePartition::open_read_only(&p)
                } else if p.join("CURRENT").exists() {
                    WidePartition::open_with(&p, &opts)
                } else {
                    WidePartition::create(&p, &opts, wanted)
                }
            })
            .py(py)?;
        if wp.partition() != wanted {
            let (r, n, k, j) = place_of(wp.partition());
            return Err(invalid(
                py,
                format!(
                    "{} holds {r} partition {n} of {k} key and {j} doc partitions, not {role} \
                     partition {part} of {} and {}",
                    path.display(),
                    layout.inner.key_parts(),
                    layout.inner.doc_parts()
                ),
            ));
        }
        Ok(PyPartition {
            inner: RwLock::new(Some(Arc::new(wp))),
            path,
        })
    }

    /// This partition's place: ``(role, part, key_parts, doc_parts)``.
    #[getter]
    fn partition(&self, py: Python<'_>) -> PyResult<(&'static str, u32, u32, u32)> {
        Ok(place_of(self.part(py)?.partition()))
    }

    /// The directory the partition was opened with.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The stored configuration, as JSON.
    fn config_json(&self, py: Python<'_>) -> PyResult<String> {
        self.part(py)?.config_json().py(py)
    }

    /// The pages the whole index holds (every partition keeps the counters).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let n = self.part(py)?.len().py(py)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The counters every partition holds, as a dict: ``pages`` and ``clusters`` (live in the
    /// whole index), ``next_page``, ``next_cluster``, ``next_seq``.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let wp = self.part(py)?;
        let c = py.detach(|| wp.counters()).py(py)?;
        let d = PyDict::new(py);
        d.set_item("pages", c.live_docs)?;
        d.set_item("clusters", c.live_clusters)?;
        d.set_item("next_page", c.next_doc)?;
        d.set_item("next_cluster", c.next_cluster)?;
        d.set_item("next_seq", c.next_seq)?;
        Ok(d)
    }

    /// Applies batch ``batch``'s log (bytes, either id width) once in effect: ``True`` when
    /// written, ``False`` when this batch was applied already (``Index.apply_log``).
    fn apply_log(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::batch)] batch: u64,
        log: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let wp = self.part(py)?;
        let log = args::borrowed(log, "log")?;
        py.detach(|| wp.apply_log_bytes(batch, log))
            .py(py)
            .map(applied)
    }

    /// ``apply_log`` of the log in the file ``path``, read an operation at a time.
    fn apply_log_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::batch)] batch: u64,
        #[pyo3(from_py_with = args::path)] path: PathBuf,
    ) -> PyResult<bool> {
        let wp = self.part(py)?;
        py.detach(|| wp.apply_log_file(batch, &path))
            .py(py)
            .map(applied)
    }

    /// The last batch log applied, ``None`` when none has been.
    fn applied_batch(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let wp = self.part(py)?;
        py.detach(|| wp.applied_batch()).py(py)
    }

    /// The partition's whole state as a batch log (bytes, ``u64`` ids).
    fn state_log<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let wp = self.part(py)?;
        let bytes = py
            .detach(|| wp.state_log().map(|log| encode_log(&log)))
            .py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The batch log (bytes, ``u64`` ids) that seeds a scratch index with these pages and
    /// clusters of this doc partition (SCALEOUT §5 S4.2), as ``Index.seed_log``.
    fn seed_log<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::wide_pages)] pages: Vec<u64>,
        #[pyo3(from_py_with = args::wide_clusters)] clusters: Vec<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let wp = self.part(py)?;
        let bytes = py
            .detach(|| wp.seed_log(&pages, &clusters).map(|log| encode_log(&log)))
            .py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// ``seed_log`` written to the new file ``path`` as it is read, never whole in memory, as
    /// ``Index.seed_log_file``; the file's size.
    fn seed_log_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::wide_pages)] pages: Vec<u64>,
        #[pyo3(from_py_with = args::wide_clusters)] clusters: Vec<u64>,
        #[pyo3(from_py_with = args::path)] path: PathBuf,
    ) -> PyResult<u64> {
        let wp = self.part(py)?;
        py.detach(|| wp.seed_log_file(&pages, &clusters, &path))
            .py(py)
    }

    /// The page ids filed under each 9-byte posting key of ``packed``, none for an
    /// over-frequent key: one list per key.
    fn posting_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::packed)] packed: Vec<u8>,
    ) -> PyResult<Vec<Vec<u64>>> {
        let wp = self.part(py)?;
        let keys = crate::partition::unpack_keys(py, &packed)?;
        py.detach(|| wp.posting_ids(&keys)).py(py).map(lists)
    }

    /// Of each simhash, the page ids within the simhash distance of it: one list each.
    fn simhash_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::simhashes)] simhashes: Vec<u64>,
    ) -> PyResult<Vec<Vec<u64>>> {
        let wp = self.part(py)?;
        py.detach(|| wp.simhash_ids(&simhashes)).py(py).map(lists)
    }

    /// A key partition's share of S3, as ``Index.probe_forest``: ``(nodes, roots, counts)``.
    fn probe_forest<'py>(
        &self,
        py: Python<'py>,
        mut join: PyRefMut<'py, crate::components::PyProbeJoin>,
        doc_tag: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let wp = self.part(py)?;
        let join = std::mem::take(&mut join.inner);
        let f = py.detach(|| wp.probe_forest(join, doc_tag)).py(py)?;
        crate::components::forest_tuple(py, f)
    }

    /// A key partition's keys for the third round of a component over the cap, as
    /// ``Index.key_stars``: ``(a, b, weights, keys)``.
    fn key_stars<'py>(
        &self,
        py: Python<'py>,
        mut stars: PyRefMut<'py, crate::components::PyKeyStars>,
        doc_tag: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let wp = self.part(py)?;
        let stars = std::mem::take(&mut stars.inner);
        let e = py.detach(|| wp.key_stars(stars, doc_tag)).py(py)?;
        crate::components::stars_tuple(py, e)
    }

    /// The page id of each key (``None`` for a key this partition does not hold).
    fn key_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::keys)] keys: Vec<String>,
    ) -> PyResult<Vec<Option<u64>>> {
        let wp = self.part(py)?;
        py.detach(|| {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            wp.key_ids(&keys)
        })
        .py(py)
    }

    /// The cluster of each page id (``None`` for a page this partition does not hold).
    fn page_clusters(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::wide_ids)] ids: Vec<u64>,
    ) -> PyResult<Vec<Option<u64>>> {
        let wp = self.part(py)?;
        py.detach(|| wp.page_clusters(&ids)).py(py)
    }

    /// The member page ids of each cluster (``None`` for a cluster this partition does not
    /// hold).
    fn cluster_member_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::wide_clusters)] clusters: Vec<u64>,
    ) -> PyResult<Vec<Option<Vec<u64>>>> {
        let wp = self.part(py)?;
        py.detach(|| wp.cluster_member_ids(&clusters))
            .py(py)
            .map(|v| {
                v.into_iter()
                    .map(|m| m.map(|s| s.iter().collect()))
                    .collect()
            })
    }

    /// Of each page id, ``(simhash, posting keys)`` (concatenated 9-byte keys), ``None`` for a
    /// page this partition does not hold.
    #[allow(clippy::type_complexity)]
    fn filed_pages<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::wide_ids)] ids: Vec<u64>,
    ) -> PyResult<Vec<Option<(u64, Bound<'py, PyBytes>)>>> {
        let wp = self.part(py)?;
        let filed = py.detach(|| wp.filed_pages(&ids)).py(py)?;
        Ok(filed
            .into_iter()
            .map(|f| f.map(|(h, keys)| (h, PyBytes::new(py, &keys.concat()))))
            .collect())
    }

    /// The pages and clusters this partition holds, as ``Index.partition_rows``.
    fn partition_rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let wp = self.part(py)?;
        let rows = py.detach(|| wp.partition_rows()).py(py)?;
        crate::index::rows_tuple(py, rows)
    }

    /// Writes a consistent snapshot of the partition to ``dir``, which must not exist.
    fn checkpoint(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::dir)] dir: PathBuf,
    ) -> PyResult<()> {
        let wp = self.part(py)?;
        py.detach(|| wp.checkpoint(&dir)).py(py)
    }

    /// Compacts every column family down to the last level.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let wp = self.part(py)?;
        py.detach(|| wp.compact()).py(py)
    }

    /// Closes the partition (after the calls still running on it return); closing twice does
    /// nothing.
    fn close(&self, py: Python<'_>) {
        let taken = self.inner.write().take();
        py.detach(move || drop(taken));
    }

    /// True once ``close()`` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }

    fn __repr__(&self) -> String {
        let state = match self.inner.read().as_ref() {
            Some(wp) => {
                let (r, n, k, j) = place_of(wp.partition());
                format!("{r} partition {n} of {k}+{j}")
            }
            None => "closed".into(),
        };
        format!(
            "neardup.Partition({:?}, {state})",
            self.path.display().to_string()
        )
    }

    /// A handle on a database cannot be pickled: open it inside the actor.
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "neardup.Partition cannot be pickled: open the partition inside the actor",
        ))
    }
}

/// A partition's database of either id width: a format 6 ``neardup.Index`` (a root made before
/// format 7) or a format 7 ``neardup.Partition``. What the distributed check and export take.
pub(crate) enum Db {
    /// A partition of `u32` ids.
    Narrow(Arc<neardup::Index>),
    /// A partition of `u64` ids.
    Wide(Arc<WidePartition>),
}

impl Db {
    /// The database of ``obj``, an open ``neardup.Index`` or ``neardup.Partition``.
    pub(crate) fn of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Db> {
        if let Ok(ix) = obj.cast::<crate::index::PyIndex>() {
            return Ok(Db::Narrow(ix.get().ix(py)?));
        }
        if let Ok(p) = obj.cast::<PyPartition>() {
            return Ok(Db::Wide(p.get().part(py)?));
        }
        Err(crate::errors::invalid_type(
            py,
            format!(
                "a partition is a neardup.Index or a neardup.Partition, not {}",
                crate::type_name(obj)
            ),
        ))
    }
}

/// `$body` with `$x` bound to the database of `$db` whichever its width (the two have the same
/// partition methods).
macro_rules! on_db {
    ($db:expr, $x:ident => $body:expr) => {
        match $db {
            $crate::wide::Db::Narrow($x) => $body,
            $crate::wide::Db::Wide($x) => $body,
        }
    };
}
pub(crate) use on_db;
