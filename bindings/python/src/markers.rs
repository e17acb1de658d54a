//! `ratekeeper.SrTcm` and `ratekeeper.TrTcm`, the three-colour markers of
//! RFC 2697 and RFC 2698, and `ratekeeper.Color`, the mark they give.
//!
//! `Color` is a real `enum.Enum` (``Color.GREEN``, ``Color("green")``,
//! iteration), created at import with the functional API like the
//! exception types of [`errors`](crate::errors), with `__module__`
//! `ratekeeper`. Marking returns its members, cached here, so a mark makes
//! no Python object.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use ratekeeper::{AnyClock, Argument, Color, SrTcm, TrTcm};

use crate::args;
use crate::clock::{self, PyManualClock};
use crate::errors::{from_rust, wrong_type};

/// The `Color` enum and its members, in the order green, yellow, red.
struct Colors {
    class: Py<PyType>,
    members: [Py<PyAny>; 3],
}

static COLORS: PyOnceLock<Colors> = PyOnceLock::new();

const ALL: [Color; 3] = [Color::Green, Color::Yellow, Color::Red];

fn colors(py: Python<'_>) -> PyResult<&Colors> {
    COLORS.get_or_try_init(py, || {
        let enum_type = py.import("enum")?.getattr("Enum")?;
        let names: Vec<(String, &str)> = ALL.iter().map(|c| (c.name().to_uppercase(), c.name())).collect();
        let kwargs = PyDict::new(py);
        kwargs.set_item("module", "ratekeeper")?;
        let class = enum_type.call(("Color", names), Some(&kwargs))?;
        class.setattr(
            "__doc__",
            "A packet's colour, as RFC 2697 and RFC 2698 mark it: GREEN conforms, YELLOW exceeds the \
             committed rate or burst only, RED exceeds every limit. Values are the lower-case names.",
        )?;
        let member = |c: Color| class.getattr(c.name().to_uppercase()).map(Bound::unbind);
        let members = [member(Color::Green)?, member(Color::Yellow)?, member(Color::Red)?];
        Ok(Colors { class: class.cast_into::<PyType>()?.unbind(), members })
    })
}

/// Adds `Color` to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("Color", colors(module.py())?.class.bind(module.py()))
}

fn color_to_py(py: Python<'_>, color: Color) -> PyResult<Py<PyAny>> {
    let index = ALL.iter().position(|c| *c == color).unwrap_or(2);
    Ok(colors(py)?.members[index].clone_ref(py))
}

fn color_arg(obj: &Bound<'_, PyAny>) -> PyResult<Color> {
    let members = &colors(obj.py())?.members;
    match members.iter().position(|m| m.bind(obj.py()).is(obj)) {
        Some(i) => Ok(ALL[i]),
        None => Err(wrong_type("color", obj, "a ratekeeper.Color")),
    }
}

/// RFC 2697's single rate three colour marker: marks packets against a
/// committed rate ``cir`` (bytes per second) with a committed burst ``cbs``
/// and an excess burst ``ebs`` (bytes). Both buckets start full.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "SrTcm")]
#[derive(Debug)]
pub struct PySrTcm {
    marker: SrTcm<AnyClock>,
    clock: Option<Py<PyManualClock>>,
    params: (u64, u64, u64),
}

#[pymethods]
impl PySrTcm {
    #[new]
    #[pyo3(signature = (cir, cbs, ebs, *, clock=None))]
    fn new(
        cir: &Bound<'_, PyAny>,
        cbs: &Bound<'_, PyAny>,
        ebs: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params =
            (args::count(cir, Argument::Cir)?, args::count(cbs, Argument::SrTcmCbs)?, args::count(ebs, Argument::Ebs)?);
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let marker = SrTcm::with_clock(params.0, params.1, params.2, any_clock).map_err(|e| from_rust(cir.py(), e))?;
        Ok(PySrTcm { marker, clock, params })
    }

    /// Marks a packet of ``bytes`` arriving now, colour-blind.
    fn mark(&self, py: Python<'_>, bytes: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let bytes = args::count(bytes, Argument::Bytes)?;
        color_to_py(py, self.marker.mark(bytes))
    }

    /// Marks a packet of ``bytes`` that arrives coloured ``color`` (by an
    /// earlier marker), colour-aware: the mark is never better than
    /// ``color``.
    fn mark_aware(&self, py: Python<'_>, bytes: &Bound<'_, PyAny>, color: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let bytes = args::count(bytes, Argument::Bytes)?;
        color_to_py(py, self.marker.mark_aware(bytes, color_arg(color)?))
    }

    /// ``(committed, excess)``: the tokens of the two buckets now, in bytes.
    #[getter]
    fn tokens(&self) -> (u64, u64) {
        self.marker.tokens()
    }

    /// The ``ManualClock`` the marker runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (cir, cbs, ebs) = self.params;
        Ok(format!("SrTcm(cir={cir}, cbs={cbs}, ebs={ebs}{})", clock::clock_repr(py, &self.clock)?))
    }
}

/// RFC 2698's two rate three colour marker: red above the peak rate
/// ``pir`` (burst ``pbs``), yellow above the committed rate ``cir`` (burst
/// ``cbs``), green within both. Rates in bytes per second, bursts in bytes.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "TrTcm")]
#[derive(Debug)]
pub struct PyTrTcm {
    marker: TrTcm<AnyClock>,
    clock: Option<Py<PyManualClock>>,
    params: (u64, u64, u64, u64),
}

#[pymethods]
impl PyTrTcm {
    #[new]
    #[pyo3(signature = (pir, pbs, cir, cbs, *, clock=None))]
    fn new(
        pir: &Bound<'_, PyAny>,
        pbs: &Bound<'_, PyAny>,
        cir: &Bound<'_, PyAny>,
        cbs: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = (
            args::count(pir, Argument::Pir)?,
            args::count(pbs, Argument::Pbs)?,
            args::count(cir, Argument::Cir)?,
            args::count(cbs, Argument::Cbs)?,
        );
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let marker =
            TrTcm::with_clock(params.0, params.1, params.2, params.3, any_clock).map_err(|e| from_rust(pir.py(), e))?;
        Ok(PyTrTcm { marker, clock, params })
    }

    /// Marks a packet of ``bytes`` arriving now, colour-blind.
    fn mark(&self, py: Python<'_>, bytes: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let bytes = args::count(bytes, Argument::Bytes)?;
        color_to_py(py, self.marker.mark(bytes))
    }

    /// Marks a packet of ``bytes`` that arrives coloured ``color``,
    /// colour-aware: the mark is never better than ``color``.
    fn mark_aware(&self, py: Python<'_>, bytes: &Bound<'_, PyAny>, color: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let bytes = args::count(bytes, Argument::Bytes)?;
        color_to_py(py, self.marker.mark_aware(bytes, color_arg(color)?))
    }

    /// ``(peak, committed)``: the tokens of the two buckets now, in bytes.
    #[getter]
    fn tokens(&self) -> (u64, u64) {
        self.marker.tokens()
    }

    /// The ``ManualClock`` the marker runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (pir, pbs, cir, cbs) = self.params;
        Ok(format!("TrTcm(pir={pir}, pbs={pbs}, cir={cir}, cbs={cbs}{})", clock::clock_repr(py, &self.clock)?))
    }
}
