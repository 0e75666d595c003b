//! The exporter: a background thread that snapshots a registry at a low
//! rate and publishes the encoded snapshot in the process's region.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::region::{RegionWriter, export_dir};
use super::snapshot::Observer;
use super::wire;
use crate::registry::Registry;
use crate::sync::Ordering;
use crate::sync::unmodelled::{Arc, AtomicBool, AtomicU64, Mutex};
use std::os::fd::OwnedFd;

/// The publishing interval when none is given: 200 ms
/// (`PVAR_EXPORT_INTERVAL_MS` overrides it for the global registry).
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(200);

/// Only one registry per process publishes (the region is named by pid).
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// How to export: the interval, the directory of the region, and whether
/// watermark marks are followed.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Time between snapshots (at least 1 ms).
    pub interval: Duration,
    /// The export directory (default `$PVAR_EXPORT_DIR`, else `/dev/shm`,
    /// else the temporary directory). The region goes in the user's
    /// private directory inside it, `pvar-<uid>` (mode 0700), made if
    /// missing; if another user has put something under that name, in a
    /// fallback directory of the user's (see [`Exporter::notice`]).
    pub dir: PathBuf,
    /// Follow every watermark's mark since export began (default `true`;
    /// `PVAR_EXPORT_MARKS=0` turns it off). The exporter then holds one
    /// subscription per watermark, as a started tool handle does: an
    /// update that sets a new extreme walks it (about 17 ns instead of
    /// 0.5 ns on one thread, `docs/export.md`), any other update costs
    /// what it did. Off, watermarks are published with their levels only
    /// and their updates cost exactly what they cost without export.
    pub watermark_marks: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            interval: DEFAULT_INTERVAL,
            dir: export_dir(),
            watermark_marks: true,
        }
    }
}

impl ExportOptions {
    /// The options `PVAR_EXPORT` asks for: `None` unless it is set to
    /// something other than `0`, `off`, `no`, `false` or nothing; then
    /// [`ExportOptions::with_env`].
    pub fn from_env() -> Option<ExportOptions> {
        let on = std::env::var("PVAR_EXPORT").ok()?;
        if is_off(&on) {
            return None;
        }
        Some(ExportOptions::with_env())
    }

    /// The defaults with the environment's settings applied, whatever
    /// `PVAR_EXPORT` says: `PVAR_EXPORT_INTERVAL_MS`, `PVAR_EXPORT_DIR`,
    /// `PVAR_EXPORT_MARKS`.
    pub fn with_env() -> ExportOptions {
        let mut o = ExportOptions::default();
        if let Some(ms) = std::env::var("PVAR_EXPORT_INTERVAL_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            o.interval = Duration::from_millis(ms);
        }
        if let Ok(marks) = std::env::var("PVAR_EXPORT_MARKS") {
            o.watermark_marks = !is_off(&marks);
        }
        o
    }
}

/// Whether an environment switch's value means "off".
fn is_off(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "off" | "no" | "false"
    )
}

/// State shared by the exporter handle and its thread.
struct Shared {
    stop: AtomicBool,
    /// Publishes done (and failures), for tests and `stats`.
    published: AtomicU64,
    failures: AtomicU64,
    /// Bytes of the last payload.
    last_bytes: AtomicU64,
    /// The writer and observer, used by the thread and by `publish_now`.
    work: Mutex<Work>,
}

struct Work {
    writer: RegionWriter,
    observer: Observer,
    buffer: Vec<u8>,
}

impl Work {
    fn publish(&mut self, shared: &Shared) {
        let snap = self.observer.snapshot();
        self.buffer.clear();
        wire::encode(&snap, &mut self.buffer);
        match self.writer.publish(&self.buffer) {
            Ok(()) => {
                shared.published.fetch_add(1, Ordering::Release);
                shared
                    .last_bytes
                    .store(self.buffer.len() as u64, Ordering::Relaxed);
            }
            Err(_) => {
                shared.failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Publishes a registry's variables in a shared-memory region that
/// `pvar read <pid>`, `pvar top <pid>`, `pvar export <pid>` and
/// [`Region`](super::Region) read from another process.
///
/// The update path is unchanged: the exporter's thread reads the
/// variables as a tool does, every [`ExportOptions::interval`], and
/// nothing else in the process knows it exists. Dropping the exporter
/// stops the thread and removes the region. One registry per process can
/// export at a time.
///
/// ```no_run
/// use pvar::Registry;
/// use pvar::export::{ExportOptions, Exporter};
/// let reg = Registry::new();
/// let sent = reg.counter("sent").register()?;
/// let exporter = Exporter::start(&reg, ExportOptions::default()).expect("export");
/// println!("pvar top {}", std::process::id());
/// sent.inc();
/// # drop(exporter);
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct Exporter {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
    interval: Duration,
    notice: Option<String>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("path", &self.path)
            .field("interval", &self.interval)
            .field("published", &self.published())
            .finish()
    }
}

impl Exporter {
    /// Creates the region, publishes a first snapshot and starts the
    /// publishing thread. Fails if this process already exports a
    /// registry, or the region cannot be created.
    pub fn start(registry: &Registry, options: ExportOptions) -> std::io::Result<Exporter> {
        if EXPORTING.swap(true, Ordering::AcqRel) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "this process already exports a registry",
            ));
        }
        let interval = options.interval.max(Duration::from_millis(1));
        let (writer, notice) = match RegionWriter::create(&options.dir, interval.as_nanos() as u64)
        {
            Ok(w) => w,
            Err(e) => {
                EXPORTING.store(false, Ordering::Release);
                return Err(e);
            }
        };
        let path = writer.path();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            published: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            last_bytes: AtomicU64::new(0),
            work: Mutex::new(Work {
                writer,
                observer: Observer::new(registry).with_marks(options.watermark_marks),
                buffer: Vec::new(),
            }),
        });
        lock(&shared.work).publish(&shared);
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("pvar-export".into())
                .spawn(move || run(&shared, interval))?
        };
        Ok(Exporter {
            shared,
            thread: Some(thread),
            path,
            interval,
            notice,
        })
    }

    /// The region's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set when the user's directory `pvar-<uid>` could not be used
    /// because something else has that name (another user's directory,
    /// a file, a link): what is in the way, its owner, and the fallback
    /// directory used instead. Readers of the same user find the region
    /// there all the same; the global registry's exporter prints it.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// The publishing interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Snapshots published so far.
    pub fn published(&self) -> u64 {
        self.shared.published.load(Ordering::Acquire)
    }

    /// Publishes failed so far (the file system refused a write).
    pub fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Relaxed)
    }

    /// Size of the last published snapshot, bytes.
    pub fn last_bytes(&self) -> u64 {
        self.shared.last_bytes.load(Ordering::Relaxed)
    }

    /// Publishes a snapshot now (besides the periodic ones): when it
    /// returns, a reader sees every update that happened before the call.
    pub fn publish_now(&self) {
        lock(&self.shared.work).publish(&self.shared);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        // The file goes before another exporter may start: a new region
        // renamed into place must not be removed by this one's drop.
        lock(&self.shared.work).writer.remove();
        EXPORTING.store(false, Ordering::Release);
    }
}

fn lock(m: &Mutex<Work>) -> impl std::ops::DerefMut<Target = Work> + '_ {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn run(shared: &Shared, interval: Duration) {
    let mut next = std::time::Instant::now() + interval;
    loop {
        // Parked until the next publish; `drop` unparks to stop early.
        loop {
            if shared.stop.load(Ordering::Acquire) {
                return;
            }
            let now = std::time::Instant::now();
            if now >= next {
                break;
            }
            std::thread::park_timeout(next - now);
        }
        lock(&shared.work).publish(shared);
        next += interval;
        let now = std::time::Instant::now();
        if next < now {
            // Publishing took longer than the interval: no catching up.
            next = now + interval;
        }
    }
}

/// The region of the exporter that [`leak_for_process`] keeps, removed at
/// process exit: its directory and name.
static LEAKED: Mutex<Option<(OwnedFd, std::ffi::CString)>> = Mutex::new(None);

extern "C" fn remove_leaked_region() {
    if let Ok(g) = LEAKED.lock()
        && let Some((dir, name)) = g.as_ref()
    {
        super::region::unlink_in(dir, name);
    }
}

/// Keeps `exporter` running for the rest of the process (the global
/// registry's, which is never dropped) and removes its region at normal
/// process exit (`atexit`). A process killed by a signal leaves the file;
/// the next exporter of the same user removes it, and readers call it
/// stale.
pub fn leak_for_process(exporter: Exporter) {
    let removal = lock(&exporter.shared.work).writer.removal();
    if let (Ok(mut g), Ok(r)) = (LEAKED.lock(), removal) {
        *g = Some(r);
    }
    std::mem::forget(exporter);
    // SAFETY: registers a plain `extern "C" fn()` with no captured state;
    // it only takes a std mutex and removes a file, which is allowed at
    // exit (no thread-local destructors involved).
    unsafe { libc::atexit(remove_leaked_region) };
}
