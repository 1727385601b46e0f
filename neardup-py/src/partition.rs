//! `neardup._neardup.Layout` and the batch-log functions of a distributed index (SCALEOUT §4,
//! §11 item 3): how its rows are cut into key and doc partitions.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::args;
use crate::errors::{invalid, IntoPy};
use crate::wide::on_db;
use neardup::merge::{decode_log, encode_log, ExportKind};

/// How a distributed index is cut into ``key_parts`` key partitions (postings, over-frequent
/// keys, simhash entries) and ``doc_parts`` doc partitions (keys, page records, texts,
/// clusters); counters and free ids are in every partition. ``simhash_max_distance`` must be
/// the indexes' (default 3). FORMAT.md "Partitions" gives the hashes.
#[pyclass(frozen, eq, name = "Layout", module = "neardup._neardup")]
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct PyLayout {
    pub(crate) inner: neardup::merge::Layout,
}

/// Several encoded batch logs, decoded in global (`u64`) ids: a log of `u32` ids (a partition's
/// seed or state, of format 6) widened.
fn decode_logs(logs: &[Vec<u8>]) -> neardup::Result<Vec<Vec<neardup::merge::LogOp<u64>>>> {
    logs.iter().map(|l| decode_log(l)).collect()
}

/// A routed log's key and doc partition logs, encoded.
type RoutedBytes = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// 9-byte posting keys from their concatenation.
pub(crate) fn unpack_keys(py: Python<'_>, packed: &[u8]) -> PyResult<Vec<[u8; 9]>> {
    if !packed.len().is_multiple_of(9) {
        return Err(invalid(
            py,
            format!(
                "posting keys are 9 bytes each: {} bytes is not a whole number of keys",
                packed.len()
            ),
        ));
    }
    Ok(packed
        .chunks_exact(9)
        .map(|c| <[u8; 9]>::try_from(c).unwrap_or_default())
        .collect())
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (key_parts, doc_parts, simhash_max_distance=3))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = args::key_parts)] key_parts: u32,
        #[pyo3(from_py_with = args::doc_parts)] doc_parts: u32,
        #[pyo3(from_py_with = args::simhash_max_distance)] simhash_max_distance: u32,
    ) -> PyResult<Self> {
        Ok(PyLayout {
            inner: neardup::merge::Layout::new(key_parts, doc_parts, simhash_max_distance)
                .py(py)?,
        })
    }

    /// The number of key partitions.
    #[getter]
    fn key_parts(&self) -> u32 {
        self.inner.key_parts()
    }

    /// The number of doc partitions.
    #[getter]
    fn doc_parts(&self) -> u32 {
        self.inner.doc_parts()
    }

    /// The simhash distance the layout is cut for.
    #[getter]
    fn simhash_max_distance(&self) -> u32 {
        self.inner.simhash_max_distance()
    }

    /// The key partition of each 9-byte posting key of ``packed`` (their concatenation).
    fn posting_parts(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::packed)] packed: Vec<u8>,
    ) -> PyResult<Vec<u32>> {
        let keys = unpack_keys(py, &packed)?;
        Ok(keys.iter().map(|k| self.inner.posting_part(k)).collect())
    }

    /// Of each simhash, the key partitions a look-up of it reads.
    fn simhash_parts(
        &self,
        #[pyo3(from_py_with = args::simhashes)] simhashes: Vec<u64>,
    ) -> Vec<Vec<u32>> {
        simhashes
            .iter()
            .map(|&h| self.inner.simhash_parts(h))
            .collect()
    }

    /// The doc partition of each external key (its ``keys`` entry).
    fn key_parts_of(&self, #[pyo3(from_py_with = args::keys)] keys: Vec<String>) -> Vec<u32> {
        keys.iter().map(|k| self.inner.key_part(k)).collect()
    }

    /// The doc partition of a page id (``id mod doc_parts``).
    fn doc_part(&self, #[pyo3(from_py_with = args::id)] id: u64) -> u32 {
        self.inner.doc_part(id)
    }

    /// The doc partition of a cluster id (``id mod doc_parts``).
    fn cluster_part(&self, #[pyo3(from_py_with = args::id)] id: u64) -> u32 {
        self.inner.cluster_part(id)
    }

    /// Cuts a batch log (bytes) by partition: ``(key_logs, doc_logs)``, one log (bytes) per
    /// partition, each in log order, in global (64-bit) ids.
    fn route<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::log)] log: Vec<u8>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let layout = self.inner;
        let (keys, docs) = py
            .detach(|| -> neardup::Result<RoutedBytes> {
                let routed = layout.route(&decode_log::<u64>(&log)?);
                Ok((
                    routed.key.iter().map(|l| encode_log(l)).collect(),
                    routed.doc.iter().map(|l| encode_log(l)).collect(),
                ))
            })
            .py(py)?;
        let list = |logs: Vec<Vec<u8>>| PyList::new(py, logs.iter().map(|l| PyBytes::new(py, l)));
        Ok((list(keys)?, list(docs)?))
    }

    /// Pickles as ``Layout(key_parts, doc_parts, simhash_max_distance)``.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, (u32, u32, u32))> {
        let l = slf.get().inner;
        Ok((
            slf.get_type(),
            (l.key_parts(), l.doc_parts(), l.simhash_max_distance()),
        ))
    }

    /// The hash of the three numbers.
    fn __hash__(&self) -> u64 {
        let l = self.inner;
        (u64::from(l.key_parts()) << 40)
            ^ (u64::from(l.doc_parts()) << 8)
            ^ u64::from(l.simhash_max_distance())
    }

    fn __repr__(&self) -> String {
        format!(
            "Layout(key_parts={}, doc_parts={}, simhash_max_distance={})",
            self.inner.key_parts(),
            self.inner.doc_parts(),
            self.inner.simhash_max_distance()
        )
    }
}

/// One scratch seed (bytes) from the partitions' seed logs: ``seed_log`` of each doc partition
/// with the pages and clusters it holds, and of each key partition with none.
#[pyfunction]
pub(crate) fn combine_seed_logs<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::logs)] logs: Vec<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| -> neardup::Result<Vec<u8>> {
            let logs = decode_logs(&logs)?;
            Ok(encode_log(&neardup::merge::combine_seed_logs(logs)?))
        })
        .py(py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// A work unit's dense scratch ids (issue #34 item 5; SCALEOUT §5 S4): its scratch index
/// numbers the pages and clusters its seed names ``0, 1, ...`` in the order of their standing
/// ids, and its new ones past them. ``scratch_seed`` makes one; ``Index.state_diff_file`` with
/// ``ids`` maps the scratch index's log back to the standing ids.
#[pyclass(frozen, name = "ScratchIds", module = "neardup._neardup")]
pub(crate) struct PyScratchIds {
    pub(crate) inner: neardup::merge::ScratchIds,
}

#[pymethods]
impl PyScratchIds {
    /// The standing page id scratch page ``id`` stands for (a new page: the standing allocator
    /// plus its place among the new ones). ``IndexFullError`` past the id space.
    fn global_page(&self, py: Python<'_>, id: u32) -> PyResult<u64> {
        self.inner.global_page(id).py(py)
    }

    /// The standing cluster id scratch cluster ``id`` stands for.
    fn global_cluster(&self, py: Python<'_>, id: u32) -> PyResult<u64> {
        self.inner.global_cluster(id).py(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "ScratchIds(pages={}, clusters={})",
            self.inner.seeded_pages(),
            self.inner.seeded_clusters()
        )
    }
}

/// A work unit's seed (bytes, ``combine_seed_logs``) numbered densely for its scratch index:
/// ``(seed, ids)``, the seed to apply to the scratch index and the ``ScratchIds`` that map its
/// ids back. ``InvalidArgumentError`` for a seed without allocators or with ids past them.
#[pyfunction]
pub(crate) fn scratch_seed<'py>(
    py: Python<'py>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyBytes>, PyScratchIds)> {
    let seed = args::borrowed(seed, "seed")?;
    let (ids, bytes) = py
        .detach(|| -> neardup::Result<_> {
            let (ids, ops) = neardup::merge::ScratchIds::from_seed(decode_log(seed)?)?;
            Ok((ids, encode_log(&ops)))
        })
        .py(py)?;
    Ok((PyBytes::new(py, &bytes), PyScratchIds { inner: ids }))
}

/// ``scratch_seed(combine_seed_logs(parts))`` with the seed logs in the files ``parts`` and the
/// scratch seed written to the file ``out``, neither log held in memory (a unit of a large
/// component, issue #34): the ``ScratchIds`` that map the scratch index's ids back. The same
/// ids, and ``out`` holds the same bytes ``scratch_seed`` returns.
#[pyfunction]
pub(crate) fn scratch_seed_files(
    py: Python<'_>,
    parts: Vec<std::path::PathBuf>,
    #[pyo3(from_py_with = args::path)] out: std::path::PathBuf,
) -> PyResult<PyScratchIds> {
    let ids = py
        .detach(|| neardup::merge::ScratchIds::from_seed_files(&parts, &out))
        .py(py)?;
    Ok(PyScratchIds { inner: ids })
}

/// One batch log (bytes) from the batch logs of several work units, each decided in its own
/// scratch index seeded from a standing index whose allocators and live counts were ``base``
/// (a dict: ``next_doc``, ``next_cluster``, ``next_seq``, ``live_docs``, ``live_clusters``) when
/// the batch started, with ``reuse_ids=False``. Without ``maps``, unit ``u``'s new ids are moved
/// past those of the units before it; with ``maps`` (one dict per unit: ``docs``, ``clusters``,
/// ``seqs``, the ids its ``i``-th new page, cluster and insertion number become), they are
/// mapped. The counters cover them all.
#[pyfunction]
#[pyo3(signature = (base, logs, maps=None))]
pub(crate) fn combine_unit_logs<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::base)] base: HashMap<String, u64>,
    #[pyo3(from_py_with = args::logs)] logs: Vec<Vec<u8>>,
    #[pyo3(from_py_with = args::maps)] maps: Option<Vec<HashMap<String, Vec<u64>>>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let maps = maps.map(|maps| maps.iter().map(id_map).collect::<Vec<_>>());
    let base = batch_base(py, &base)?;
    let bytes = py
        .detach(|| -> neardup::Result<Vec<u8>> {
            let logs = decode_logs(&logs)?;
            let log = match &maps {
                None => neardup::merge::combine_unit_logs(base, logs)?,
                Some(maps) => neardup::merge::combine_unit_logs_mapped(base, logs, maps)?,
            };
            Ok(encode_log(&log))
        })
        .py(py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// A work unit's id map from Python (``docs``, ``clusters``, ``seqs``).
fn id_map(m: &HashMap<String, Vec<u64>>) -> neardup::merge::IdMap {
    let list = |name: &str| m.get(name).cloned().unwrap_or_default();
    neardup::merge::IdMap {
        docs: list("docs"),
        clusters: list("clusters"),
        seqs: list("seqs"),
    }
}

/// A batch's start from Python (``next_doc``, ``next_cluster``, ``next_seq``, ``live_docs``,
/// ``live_clusters``; ``wide``: 1 when the partitions store 64-bit ids, format 7, so the batch's
/// allocators may pass 2³²).
fn batch_base(py: Python<'_>, base: &HashMap<String, u64>) -> PyResult<neardup::merge::BatchBase> {
    let get = |name: &str| -> PyResult<u64> {
        base.get(name)
            .copied()
            .ok_or_else(|| invalid(py, format!("base has no {name:?}")))
    };
    Ok(neardup::merge::BatchBase {
        next_doc: get("next_doc")?,
        next_cluster: get("next_cluster")?,
        next_seq: get("next_seq")?,
        live_docs: get("live_docs")?,
        live_clusters: get("live_clusters")?,
        wide: base.get("wide").is_some_and(|&w| w != 0),
    })
}

/// Work unit ``unit``'s log (bytes) with its new ids mapped by ``map`` (``docs``, ``clusters``,
/// ``seqs``) and its counters left out, and what it gave out and changed (a dict: ``docs``,
/// ``clusters``, ``seqs``, ``live_docs``, ``live_clusters``, the last two changes). The batch
/// log is ``batch_counters`` of every unit's totals, then each unit's mapped log in unit order
/// (``join_logs``): the same as ``combine_unit_logs`` with the maps, without every unit's log in
/// one place.
#[pyfunction]
pub(crate) fn remap_unit_log<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::base)] base: HashMap<String, u64>,
    #[pyo3(from_py_with = args::unit)] unit: usize,
    #[pyo3(from_py_with = args::log)] log: Vec<u8>,
    #[pyo3(from_py_with = args::map)] map: HashMap<String, Vec<u64>>,
) -> PyResult<(Bound<'py, PyBytes>, HashMap<&'static str, i64>)> {
    let map = id_map(&map);
    let base = batch_base(py, &base)?;
    let (bytes, t) = py
        .detach(|| -> neardup::Result<_> {
            let ops = decode_log::<u64>(&log)?;
            let (ops, t) = neardup::merge::remap_unit_log(base, unit, ops, &map)?;
            Ok((encode_log(&ops), t))
        })
        .py(py)?;
    Ok((PyBytes::new(py, &bytes), totals_dict(py, &t)?))
}

/// Work unit ``unit``'s log, the file ``log``, with its new ids mapped by ``map`` (as
/// ``remap_unit_log``) and cut by partition (as ``Layout.route``), read and written one
/// operation at a time to files in the directory ``out``, one a partition the unit changes
/// (``key-000.ndlog``, ``doc-001.ndlog``...), neither log held in memory: ``(totals, files)``, ``files`` a list of ``(name, operations, bytes)`` (``name``
/// without ``.ndlog``).
#[pyfunction]
pub(crate) fn route_unit_log_file(
    py: Python<'_>,
    #[pyo3(from_py_with = args::base)] base: HashMap<String, u64>,
    #[pyo3(from_py_with = args::unit)] unit: usize,
    #[pyo3(from_py_with = args::path)] log: std::path::PathBuf,
    #[pyo3(from_py_with = args::map)] map: HashMap<String, Vec<u64>>,
    layout: &Bound<'_, PyLayout>,
    #[pyo3(from_py_with = args::dir)] out: std::path::PathBuf,
) -> PyResult<(HashMap<&'static str, i64>, Vec<neardup::merge::RoutedFile>)> {
    let map = id_map(&map);
    let base = batch_base(py, &base)?;
    let layout = layout.get().inner;
    let (files, t) = py
        .detach(|| neardup::merge::route_unit_log_file(base, unit, &log, &map, &layout, &out))
        .py(py)?;
    Ok((totals_dict(py, &t)?, files))
}

/// What a unit gave out and changed, as ``remap_unit_log`` returns it.
fn totals_dict(
    py: Python<'_>,
    t: &neardup::merge::UnitTotals,
) -> PyResult<HashMap<&'static str, i64>> {
    let count = |name: &str, v: u64| {
        i64::try_from(v).map_err(|_| invalid(py, format!("a work unit's {name} is over 2**63")))
    };
    Ok(HashMap::from([
        ("docs", count("docs", t.docs)?),
        ("clusters", count("clusters", t.clusters)?),
        ("seqs", count("seqs", t.seqs)?),
        ("live_docs", t.live_docs),
        ("live_clusters", t.live_clusters),
    ]))
}

/// The counters of a batch log (bytes) whose work units gave out and changed ``totals`` (the
/// dicts ``remap_unit_log`` returns).
#[pyfunction]
pub(crate) fn batch_counters<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::base)] base: HashMap<String, u64>,
    #[pyo3(from_py_with = args::totals)] totals: Vec<HashMap<String, i64>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let base = batch_base(py, &base)?;
    let mut units = Vec::with_capacity(totals.len());
    for t in &totals {
        let get = |name: &str| t.get(name).copied().unwrap_or(0);
        let count = |name: &str| -> PyResult<u64> {
            u64::try_from(get(name))
                .map_err(|_| invalid(py, format!("totals {name:?} is negative")))
        };
        units.push(neardup::merge::UnitTotals {
            docs: count("docs")?,
            clusters: count("clusters")?,
            seqs: count("seqs")?,
            live_docs: get("live_docs"),
            live_clusters: get("live_clusters"),
        });
    }
    let ops = neardup::merge::batch_counters(base, &units).py(py)?;
    Ok(PyBytes::new(py, &encode_log(&ops)))
}

/// One log (bytes) of the operations of ``logs`` in order: a partition's part of a batch log
/// from its part of the counters and of each work unit's mapped log.
#[pyfunction]
pub(crate) fn join_logs<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = args::logs)] logs: Vec<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| -> neardup::Result<Vec<u8>> {
            // One operation at a time: a partition's log of a large day is never held decoded.
            let mut out = neardup::merge::LogWriter::<u64>::new();
            for log in &logs {
                for op in neardup::merge::LogReader::<u64>::new(log)? {
                    out.push(&op?);
                }
            }
            Ok(out.finish())
        })
        .py(py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// ``join_logs`` from files to a file: the log ``head`` (bytes: the partition's part of the
/// counters), then the operations of each log file of ``pieces`` in order, written to the file
/// ``out`` one operation at a time, no log held in memory; the joined log's size in bytes. A
/// damaged piece leaves no file at ``out``.
#[pyfunction]
pub(crate) fn join_log_files(
    py: Python<'_>,
    #[pyo3(from_py_with = args::head)] head: Vec<u8>,
    #[pyo3(from_py_with = args::pieces)] pieces: Vec<std::path::PathBuf>,
    #[pyo3(from_py_with = args::out_file)] out: std::path::PathBuf,
) -> PyResult<u64> {
    py.detach(|| neardup::merge::join_log_files::<u64>(&head, &pieces, &out))
        .py(py)
}

/// The counters a batch log (bytes) sets, as a dict with those of ``next_doc``,
/// ``next_cluster``, ``next_seq``, ``live_docs`` and ``live_clusters`` it holds (the last value
/// of each).
#[pyfunction]
pub(crate) fn log_counters(
    py: Python<'_>,
    #[pyo3(from_py_with = args::log)] log: Vec<u8>,
) -> PyResult<std::collections::HashMap<&'static str, u64>> {
    let ops = decode_log::<u64>(&log).py(py)?;
    let mut out = std::collections::HashMap::new();
    for op in &ops {
        if let neardup::merge::LogOp::Counter(c) = op {
            let (name, v) = match *c {
                neardup::merge::LogCounter::NextDoc(n) => ("next_doc", n),
                neardup::merge::LogCounter::NextCluster(n) => ("next_cluster", n),
                neardup::merge::LogCounter::NextSeq(n) => ("next_seq", n),
                neardup::merge::LogCounter::LiveDocs(n) => ("live_docs", n),
                neardup::merge::LogCounter::LiveClusters(n) => ("live_clusters", n),
                _ => continue,
            };
            out.insert(name, v);
        }
    }
    Ok(out)
}

// ----- The distributed check of one partition (SCALEOUT §9 "Check"; neardup.ray's actors) -----

/// The over-frequent keys a partition marks, concatenated (9 bytes each; none in a doc
/// partition): what the doc partitions' checks leave out.
#[pyfunction]
pub(crate) fn _partition_frequent<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let db = crate::wide::Db::of(py, index)?;
    let keys = py
        .detach(|| on_db!(&db, ix => ix.partition_frequent()))
        .py(py)?;
    Ok(PyBytes::new(py, &keys.concat()))
}

/// Checks one partition of a distributed index on its own (``Index::partition_check``): a dict
/// with ``problems`` (a list), ``pages``, ``clusters``, ``postings`` (held), ``counters`` (next
/// page id, next cluster id, next insertion number, live pages, live clusters), ``free`` (free
/// page and cluster ids held), ``free_hash`` and ``digests``: a list of ``(kind, peer, filed,
/// buckets)``, ``buckets`` a list of ``(count, sum)``. ``frequent``: every over-frequent key of
/// the index, concatenated.
#[pyfunction]
pub(crate) fn _partition_check<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    #[pyo3(from_py_with = args::packed)] frequent: Vec<u8>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let db = crate::wide::Db::of(py, index)?;
    let frequent = unpack_keys(py, &frequent)?;
    let layout = layout.inner;
    let rep = py
        .detach(|| on_db!(&db, ix => ix.partition_check(&layout, &frequent)))
        .py(py)?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("problems", rep.problems)?;
    d.set_item("pages", rep.pages)?;
    d.set_item("clusters", rep.clusters)?;
    d.set_item("postings", rep.postings)?;
    d.set_item("counters", rep.counters)?;
    d.set_item("free", rep.free)?;
    d.set_item("free_hash", rep.free_hash)?;
    d.set_item(
        "digests",
        rep.digests
            .into_iter()
            .map(|g| (g.kind, g.peer, g.filed, g.buckets))
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// The entries (bytes) of one digest of ``_partition_check`` in ``buckets``: how a mismatch
/// between two partitions is narrowed to the entries at fault.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _partition_check_entries<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    #[pyo3(from_py_with = args::packed)] frequent: Vec<u8>,
    kind: u8,
    peer: u32,
    filed: bool,
    buckets: Vec<usize>,
) -> PyResult<Bound<'py, PyList>> {
    let db = crate::wide::Db::of(py, index)?;
    let frequent = unpack_keys(py, &frequent)?;
    let layout = layout.inner;
    let buckets: std::collections::HashSet<usize> = buckets.into_iter().collect();
    let entries = py
        .detach(|| {
            on_db!(&db, ix => {
                ix.partition_check_entries(&layout, &frequent, (kind, peer, filed), &buckets)
            })
        })
        .py(py)?;
    PyList::new(py, entries.iter().map(|e| PyBytes::new(py, e)))
}

// ----- The distributed export (SCALEOUT §9 "Export"; neardup.ray's actors and driver) -----

/// ``"pages"``, ``"clusters"`` or ``"rows"``.
fn export_kind(py: Python<'_>, kind: &str) -> PyResult<ExportKind> {
    match kind {
        "pages" => Ok(ExportKind::Pages),
        "clusters" => Ok(ExportKind::Clusters),
        "rows" => Ok(ExportKind::Rows),
        _ => Err(invalid(
            py,
            format!("an export part is of kind 'pages', 'clusters' or 'rows', not {kind:?}"),
        )),
    }
}

/// The bytes of several messages.
fn slices<'a>(messages: &'a [Bound<'_, PyBytes>]) -> Vec<&'a [u8]> {
    messages.iter().map(|m| m.as_bytes()).collect()
}

fn bytes_list<'py>(py: Python<'py>, messages: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, messages.iter().map(|m| PyBytes::new(py, m)))
}

/// Step 1 of the distributed export (``Index::export_asks``): what this doc partition asks of
/// each doc partition, one message (bytes) per doc partition of ``layout``, in order.
/// ``kind``: ``"pages"`` (the export), ``"clusters"`` (the clusters' export) or ``"rows"``.
#[pyfunction]
pub(crate) fn _export_asks<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    kind: &str,
) -> PyResult<Bound<'py, PyList>> {
    let db = crate::wide::Db::of(py, index)?;
    let kind = export_kind(py, kind)?;
    let layout = layout.inner;
    let asks = py
        .detach(|| on_db!(&db, ix => ix.export_asks(&layout, kind)))
        .py(py)?;
    bytes_list(py, asks)
}

/// Step 2 (``Index::export_replies``): the replies to ``asks``, what each doc partition (in
/// order) asked of this one, one message per ask.
#[pyfunction]
pub(crate) fn _export_replies<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    asks: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyList>> {
    let db = crate::wide::Db::of(py, index)?;
    let layout = layout.inner;
    let asks = slices(&asks);
    let replies = py
        .detach(|| on_db!(&db, ix => ix.export_replies(&layout, &asks)))
        .py(py)?;
    bytes_list(py, replies)
}

/// Step 3 (``Index::export_cluster_replies``): the replies to the clusters of ``asks``, from
/// ``replies`` (those to this partition's own asks), one message per ask.
#[pyfunction]
pub(crate) fn _export_cluster_replies<'py>(
    py: Python<'py>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    asks: Vec<Bound<'py, PyBytes>>,
    replies: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyList>> {
    let db = crate::wide::Db::of(py, index)?;
    let layout = layout.inner;
    let (asks, replies) = (slices(&asks), slices(&replies));
    let out = py
        .detach(|| on_db!(&db, ix => ix.export_cluster_replies(&layout, &asks, &replies)))
        .py(py)?;
    bytes_list(py, out)
}

/// Step 4 (``Index::export_part``): this doc partition's part of ``kind`` written to the file
/// ``path`` (created or truncated), from the replies to its asks. Returns the records written.
#[pyfunction]
pub(crate) fn _export_part(
    py: Python<'_>,
    index: &Bound<'_, PyAny>,
    layout: &PyLayout,
    kind: &str,
    path: std::path::PathBuf,
    replies: Vec<Bound<'_, PyBytes>>,
    cluster_replies: Vec<Bound<'_, PyBytes>>,
) -> PyResult<u64> {
    let db = crate::wide::Db::of(py, index)?;
    let kind = export_kind(py, kind)?;
    let layout = layout.inner;
    let (replies, cluster_replies) = (slices(&replies), slices(&cluster_replies));
    py.detach(|| {
        let file = std::fs::File::create(&path).map_err(|source| neardup::Error::Io {
            path: path.clone(),
            source,
        })?;
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        on_db!(&db, ix => ix.export_part(&layout, kind, &replies, &cluster_replies, out, path.clone()))
    })
    .py(py)
}

/// A Python object with ``read(n) -> bytes`` (at most ``n``; empty at the end) as a reader;
/// the first exception it raised is kept for the caller.
struct PyReader {
    obj: Py<PyAny>,
    error: Option<PyErr>,
}

impl std::io::Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let got = self
                .obj
                .call_method1(py, "read", (buf.len(),))
                .and_then(|b| {
                    let b = b.into_bound(py);
                    let b = b.cast::<PyBytes>()?;
                    let bytes = b.as_bytes();
                    let n = bytes.len().min(buf.len());
                    buf[..n].copy_from_slice(&bytes[..n]);
                    Ok(n)
                });
            got.map_err(|e| {
                let message = e.to_string();
                self.error.get_or_insert(e);
                std::io::Error::other(message)
            })
        })
    }
}

/// The parts' readers, by name; the first exception one raised replaces the merge's error.
fn merge_parts<T: Send>(
    py: Python<'_>,
    parts: Vec<(String, Py<PyAny>)>,
    merge: impl FnOnce(Vec<(String, &mut PyReader)>) -> neardup::Result<T> + Send,
) -> PyResult<T> {
    let mut readers: Vec<(String, PyReader)> = parts
        .into_iter()
        .map(|(name, obj)| (name, PyReader { obj, error: None }))
        .collect();
    let result = py.detach(|| merge(readers.iter_mut().map(|(n, r)| (n.clone(), r)).collect()));
    if result.is_err() {
        if let Some(e) = readers.iter_mut().find_map(|(_, r)| r.error.take()) {
            return Err(e);
        }
    }
    result.py(py)
}

/// Step 5 (``merge_export_tsv``): the page parts, each ``(name, reader)`` (a reader has
/// ``read(n) -> bytes``), merged by page id into the TSV of ``neardup export`` at ``path``
/// (written beside it as ``<path>.tmp`` and renamed over it once whole). Returns the rows
/// written. Holds a record and a buffer per part.
#[pyfunction]
pub(crate) fn _export_merge_tsv(
    py: Python<'_>,
    parts: Vec<(String, Py<PyAny>)>,
    path: std::path::PathBuf,
) -> PyResult<u64> {
    merge_parts(py, parts, |readers| {
        let readers = readers
            .into_iter()
            .map(|(n, r)| (n, std::io::BufReader::with_capacity(64 << 10, r)))
            .collect();
        // Written beside it and renamed over it once whole: a failure or a killed driver part
        // way leaves the previous export, never a cut one.
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        let tmp = path.with_file_name(name);
        let io = |p: &std::path::Path| {
            let p = p.to_path_buf();
            move |source| neardup::Error::Io { path: p, source }
        };
        let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let rows = match neardup::merge::merge_export_tsv(readers, &mut out, tmp.clone()) {
            Ok(rows) => rows,
            Err(e) => {
                drop(out);
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        out.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(rows)
    })
}

/// The merged columns of one kind's parts.
enum Columns {
    Pages(Vec<String>, Vec<String>),
    Clusters(Vec<u64>, Vec<String>, Vec<Vec<String>>),
    Rows(Vec<u64>, Vec<String>, Vec<u64>, Vec<u64>),
}

/// Step 5 for a table: the parts of ``kind``, each ``(name, reader)``, merged by id into
/// columns: ``(keys, representatives)`` for ``"pages"``, ``(clusters, representatives,
/// members)`` for ``"clusters"``, ``(docs, keys, clusters, seqs)`` for ``"rows"`` (lists).
#[pyfunction]
pub(crate) fn _export_merge_columns<'py>(
    py: Python<'py>,
    kind: &str,
    parts: Vec<(String, Py<PyAny>)>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let kind = export_kind(py, kind)?;
    let columns = merge_parts(py, parts, |readers| {
        let readers = readers
            .into_iter()
            .map(|(n, r)| (n, std::io::BufReader::with_capacity(64 << 10, r)))
            .collect();
        let mut columns = match kind {
            ExportKind::Pages => Columns::Pages(Vec::new(), Vec::new()),
            ExportKind::Clusters => Columns::Clusters(Vec::new(), Vec::new(), Vec::new()),
            _ => Columns::Rows(Vec::new(), Vec::new(), Vec::new(), Vec::new()),
        };
        neardup::merge::merge_export_parts(kind, readers, |id, payload| {
            match &mut columns {
                Columns::Pages(keys, reps) => {
                    let (k, r) = neardup::merge::decode_page_row(payload)?;
                    keys.push(k.to_owned());
                    reps.push(r.to_owned());
                }
                Columns::Clusters(ids, reps, members) => {
                    let (r, m) = neardup::merge::decode_cluster_row(payload)?;
                    ids.push(id);
                    reps.push(r);
                    members.push(m);
                }
                Columns::Rows(docs, keys, clusters, seqs) => {
                    let (c, s, k) = neardup::merge::decode_page_record(payload)?;
                    docs.push(id);
                    keys.push(k);
                    clusters.push(c);
                    seqs.push(s);
                }
            }
            Ok(())
        })?;
        Ok(columns)
    })?;
    match columns {
        Columns::Pages(a, b) => (a, b).into_pyobject(py),
        Columns::Clusters(a, b, c) => (a, b, c).into_pyobject(py),
        Columns::Rows(a, b, c, d) => (a, b, c, d).into_pyobject(py),
    }
}
