//! neardup's errors as Python exceptions: one class per variant of [`neardup::Error`], all
//! subclasses of `neardup.Error`, defined in `neardup/_errors.py` (where they can also derive from
//! the built-in exception a Python caller expects: `KeyError` for a missing key, `ValueError` for a
//! bad argument, `TypeError` too for one of the wrong type, `OSError` for a file-system error).
//! The variant's fields become attributes.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use pyo3::IntoPyObjectExt;

use neardup::Error;

/// `neardup._errors`, imported once.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The Python exception of a neardup error.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    let (class, attrs): (&str, Vec<(&str, Py<PyAny>)>) = match e {
        Error::InvalidArgument(_) => ("InvalidArgumentError", vec![]),
        Error::PageTooLarge { size, limit } => (
            "PageTooLargeError",
            vec![("size", obj(py, size)), ("limit", obj(py, limit))],
        ),
        Error::BinaryPage {
            control_share,
            sampled,
        } => (
            "BinaryPageError",
            vec![
                ("control_share", obj(py, control_share)),
                ("sampled", obj(py, sampled)),
            ],
        ),
        Error::Storage { context, .. } => ("StorageError", vec![("context", obj(py, context))]),
        Error::Corruption { cf, key, reason } => (
            "CorruptionError",
            vec![
                ("cf", obj(py, cf)),
                ("key", obj(py, key)),
                ("reason", obj(py, reason)),
            ],
        ),
        Error::IncompatibleFormat { found, supported } => (
            "IncompatibleFormatError",
            vec![("found", obj(py, found)), ("supported", obj(py, supported))],
        ),
        Error::IncompatibleConfig {
            field,
            stored,
            requested,
        } => (
            "IncompatibleConfigError",
            vec![
                ("field", obj(py, field)),
                ("stored", obj(py, stored)),
                ("requested", obj(py, requested)),
            ],
        ),
        Error::CheckFailed { problems, first } => (
            "CheckFailedError",
            vec![("problems", obj(py, problems)), ("first", obj(py, first))],
        ),
        Error::Poisoned => ("PoisonedError", vec![]),
        Error::NotFound(key) => ("NotFoundError", vec![("key", obj(py, key))]),
        Error::Full => ("FullError", vec![]),
        Error::TextUnavailable { key, reason } => (
            "TextUnavailableError",
            vec![("key", obj(py, key)), ("reason", obj(py, reason))],
        ),
        Error::ReadOnly(path, operation) => (
            "ReadOnlyError",
            vec![
                ("path", obj(py, path.display().to_string())),
                ("operation", obj(py, operation)),
            ],
        ),
        Error::AlreadyOpen { path, open_as } => (
            "AlreadyOpenError",
            vec![
                ("path", obj(py, path.display().to_string())),
                ("open_as", obj(py, open_as.display().to_string())),
            ],
        ),
        Error::WrongProcess { opened_by, current } => (
            "WrongProcessError",
            vec![
                ("opened_by", obj(py, opened_by)),
                ("current", obj(py, current)),
            ],
        ),
        // RocksDB is another process's: the same class, `opened_by` naming that process.
        Error::ForkedStorage {
            started_by,
            current,
        } => (
            "WrongProcessError",
            vec![
                ("opened_by", obj(py, started_by)),
                ("current", obj(py, current)),
            ],
        ),
        Error::Io { path, source } => (
            "IoError",
            vec![
                ("path", obj(py, path.display().to_string())),
                ("errno", obj(py, source.raw_os_error())),
            ],
        ),
        Error::ChangesTrimmed { since, trimmed } => (
            "ChangesTrimmedError",
            vec![("since", obj(py, since)), ("trimmed", obj(py, trimmed))],
        ),
        // New variants (the enum is non-exhaustive) are the base class until they get their own.
        _ => ("Error", vec![]),
    };
    exception(py, class, &message, &attrs)
}

/// An instance of `neardup._errors.<class>(message)` with these attributes, as a `PyErr`.
pub(crate) fn exception(
    py: Python<'_>,
    class: &str,
    message: &str,
    attrs: &[(&str, Py<PyAny>)],
) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let module =
            ERRORS.get_or_try_init(py, || py.import("neardup._errors").map(|m| m.unbind()))?;
        let exc = module.bind(py).getattr(class)?.call1((message,))?;
        for (name, value) in attrs {
            exc.setattr(*name, value.bind(py))?;
        }
        Ok(PyErr::from_value(exc))
    })();
    // Only when `neardup._errors` cannot be imported (the extension used outside its package).
    made.unwrap_or_else(|e| {
        let err = PyRuntimeError::new_err(format!("{class}: {message}"));
        err.set_cause(py, Some(e));
        err
    })
}

/// `InvalidArgumentError(message)` (a `ValueError`): for argument values the bindings refuse
/// before the library sees them.
pub(crate) fn invalid(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    exception(py, "InvalidArgumentError", message.as_ref(), &[])
}

/// `InvalidTypeError(message)` (an `InvalidArgumentError` and a `TypeError`): for an argument
/// of the wrong type, or a call that gives a wrong combination of arguments.
pub(crate) fn invalid_type(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    exception(py, "InvalidTypeError", message.as_ref(), &[])
}

fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    match v.into_bound_py_any(py) {
        Ok(o) => o.unbind(),
        Err(_) => py.None(),
    }
}

/// Extension of `neardup::Result` for the bindings.
pub(crate) trait IntoPy<T> {
    /// The Python exception of the error.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for neardup::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
