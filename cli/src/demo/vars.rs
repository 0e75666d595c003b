//! The demo component's variables: what a communication library would
//! declare next to its hot loop. `pvar list` registers the same set.

use pvar::{
    CallbackVar, Callbacks, Counter, Datatype, Enumeration, HighWatermark, Level, LowWatermark,
    Percentage, PvarClass, Scope, Size, State, Verbosity,
};

/// The handle value of the communicator-like object the per-peer counts
/// are bound to (think `MPI_COMM_WORLD`).
pub const COMM_WORLD: u64 = 0x101;

/// Most workers the demo runs (keeps every array read within a 64-element
/// stack buffer in the signal handler: the peer matrix has `threads²`).
pub const MAX_THREADS: usize = 8;

/// Workers `pvar list` registers the demo's variables for.
pub const LIST_THREADS: usize = 4;

/// Root category of the demo's variables.
pub const CATEGORY: &str = "demo";

pvar::cvar! {
    /// Bytes per message.
    pub static MESSAGE_SIZE: u64 = 256;
    name = "demo_message_size";
    description = "payload bytes of every message the demo workers send (`--message-size` writes it)";
    category = "demo_tuning";
    verbosity = Verbosity::UserBasic;
    scope = Scope::Local;
    env = ["PVAR_DEMO_MESSAGE_SIZE"];
}

pvar::cvar! {
    /// Eager / rendezvous threshold.
    pub static EAGER_LIMIT: u64 = 4096;
    name = "demo_eager_limit";
    description = "messages up to this many bytes are sent eagerly, in bursts of \
                   demo_eager_window without waiting; larger ones use a rendezvous: \
                   one message, then wait for traffic from a peer";
    category = "demo_tuning";
    verbosity = Verbosity::TunerBasic;
    scope = Scope::AllEq;
    env = ["PVAR_DEMO_EAGER_LIMIT"];
}

pvar::cvar! {
    /// Eager burst length.
    pub static EAGER_WINDOW: u64 = 16;
    name = "demo_eager_window";
    description = "messages a worker sends in one burst when messages go eagerly";
    category = "demo_tuning";
    verbosity = Verbosity::TunerDetail;
    scope = Scope::Local;
    env = ["PVAR_DEMO_EAGER_WINDOW"];
}

/// A worker's state, the values of the `demo_worker_state` enumeration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum WorkerState {
    /// Before the first update (the value every element starts with).
    #[allow(dead_code)]
    Idle = 0,
    Computing = 1,
    Sending = 2,
    Receiving = 3,
    Waiting = 4,
    Done = 5,
}

/// Names of [`WorkerState`] values, by value.
pub const STATE_NAMES: [&str; 6] = [
    "idle",
    "computing",
    "sending",
    "receiving",
    "waiting",
    "done",
];

/// The demo's fixed-shape variables, declared where a component declares
/// them: at their use sites (`pvar::counter!` and friends, in the global
/// registry). Each is one function so that the hot loop and [`register`]
/// name the same site; inlined, a call is the macro's thread-local cache.
pub mod site {
    use pvar::{Aggregate, BindKind, Counter, SiteRef, Timer};

    /// Messages sent by all workers.
    #[inline(always)]
    pub fn msgs_sent() -> SiteRef<Counter> {
        pvar::counter!(
            "demo_msgs_sent",
            description = "messages sent by all workers",
            category = "demo_traffic"
        )
    }

    /// Messages received by all workers.
    #[inline(always)]
    pub fn msgs_received() -> SiteRef<Counter> {
        pvar::counter!(
            "demo_msgs_received",
            description = "messages received by all workers",
            category = "demo_traffic"
        )
    }

    /// Payload bytes sent.
    #[inline(always)]
    pub fn bytes_sent() -> SiteRef<Aggregate<u64>> {
        pvar::aggregate!(
            "demo_bytes_sent",
            description = "payload bytes sent",
            category = "demo_traffic"
        )
    }

    /// Payload bytes received.
    #[inline(always)]
    pub fn bytes_received() -> SiteRef<Aggregate<u64>> {
        pvar::aggregate!(
            "demo_bytes_received",
            description = "payload bytes received",
            category = "demo_traffic"
        )
    }

    /// Time in send calls.
    #[inline(always)]
    pub fn send_time() -> SiteRef<Timer> {
        pvar::timer!(
            "demo_send_time",
            description = "time spent in send calls, summed over workers (seconds)",
            category = "demo_traffic"
        )
    }

    /// Time in receive calls.
    #[inline(always)]
    pub fn recv_time() -> SiteRef<Timer> {
        pvar::timer!(
            "demo_recv_time",
            description =
                "time spent in receive calls, waiting included, summed over workers (seconds)",
            category = "demo_traffic"
        )
    }

    /// Messages per peer of a communicator: bound, one instance per
    /// communicator with one element per peer (its size is known only when
    /// the communicator exists).
    #[inline(always)]
    pub fn msgs_to_peer() -> SiteRef<Counter> {
        pvar::counter!(
            "demo_msgs_to_peer",
            description = "messages sent to each peer of a communicator (one element per peer)",
            bind = BindKind::Comm,
            category = "demo_peers"
        )
    }
}

/// The demo's variables a use site cannot declare, as the component holds
/// them: arrays with one element per worker (a use site's element count is
/// a compile-time constant; the demo's worker count is chosen at run
/// time), a SIZE, a callback variable, and the [`COMM_WORLD`] instance of
/// the bound per-peer counter. The fixed-shape ones are in [`site`].
#[derive(Clone)]
#[allow(dead_code)]
pub struct DemoVars {
    pub depth: Level<u64>,
    pub depth_hwm: HighWatermark<u64>,
    pub depth_lwm: LowWatermark<u64>,
    pub state: State,
    pub busy: Percentage,
    /// The instance of [`site::msgs_to_peer`] for [`COMM_WORLD`]: element
    /// `j` counts messages sent to worker `j`.
    pub per_peer: Counter,
    pub matrix: Counter,
    pub msg_size: Size<u64>,
    pub in_flight: CallbackVar,
    /// MPI 4 event: a receive found its inbox at least this deep (the
    /// run's threshold): (depth, worker).
    pub inbox_deep: pvar::Event<(u64, i32)>,
}

/// Name of the demo's event.
pub const INBOX_DEEP: &str = "demo_inbox_deep";

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Registers the demo's categories, control variables and performance
/// variables for `peers` workers in [`pvar::global`] (where the use sites
/// and `cvar!` declare theirs), registering the use sites' variables now so
/// that a tool finds them before the first update.
pub fn register(peers: usize) -> Res<DemoVars> {
    let reg = pvar::global();
    let cats = [
        (
            CATEGORY,
            "the pvar demo: workers exchanging messages over in-process channels",
        ),
        (
            "demo_traffic",
            "messages and bytes sent and received, time in send and receive",
        ),
        ("demo_queues", "inbox depth per worker and its watermarks"),
        (
            "demo_workers",
            "what each worker is doing and how busy it is",
        ),
        ("demo_peers", "messages per peer, bound to a communicator"),
        (
            "demo_tuning",
            "control variables that change the demo's behaviour",
        ),
    ];
    for (name, desc) in cats {
        reg.categories().define(name, desc)?;
        if name != CATEGORY {
            reg.categories().add_subcategory(CATEGORY, name)?;
        }
    }
    MESSAGE_SIZE.register();
    EAGER_LIMIT.register();
    EAGER_WINDOW.register();
    site::msgs_sent().index();
    site::msgs_received().index();
    site::bytes_sent().index();
    site::bytes_received().index();
    site::send_time().index();
    site::recv_time().index();

    let depth = reg
        .level::<u64>("demo_queue_depth")
        .description("messages waiting in each worker's inbox")
        .count(peers)
        .category("demo_queues")
        .register()?;
    let depth_hwm = reg
        .high_watermark::<u64>("demo_queue_depth_hwm")
        .description("highest inbox depth of each worker since the handle started")
        .count(peers)
        .category("demo_queues")
        .register()?;
    let depth_lwm = reg
        .low_watermark::<u64>("demo_queue_depth_lwm")
        .description("lowest inbox depth of each worker since the handle started")
        .count(peers)
        .category("demo_queues")
        .register()?;
    let states = Enumeration::new(
        "demo_worker_state",
        STATE_NAMES.iter().enumerate().map(|(v, n)| (*n, v as i32)),
    )?;
    let state = reg
        .state("demo_worker_state")
        .description("what each worker is doing")
        .count(peers)
        .enumeration(states)
        .category("demo_workers")
        .register()?;
    let busy = reg
        .percentage("demo_worker_busy")
        .description("fraction of each worker's recent time not spent waiting for messages")
        .count(peers)
        .category("demo_workers")
        .register()?;
    let per_peer = site::msgs_to_peer().create_instance(COMM_WORLD, peers)?;
    let matrix = reg
        .counter("demo_msgs_matrix")
        .description("messages from worker i to worker j, at element i * peers + j")
        .count(peers * peers)
        .verbosity(Verbosity::TunerDetail)
        .category("demo_peers")
        .register()?;
    let msg_size = reg
        .size::<u64>("demo_message_size")
        .description("current message payload size in bytes (the demo_message_size cvar)")
        .category("demo_traffic")
        .register()?;
    let in_flight = reg
        .callback_pvar(
            "demo_msgs_in_flight",
            PvarClass::Level,
            Datatype::UnsignedLongLong,
            Callbacks::new(|_obj, _i| {
                site::msgs_sent()
                    .get()
                    .saturating_sub(site::msgs_received().get())
            }),
        )
        .description("messages sent and not yet received, computed by callback")
        .category("demo_queues")
        .readonly(true)
        .continuous(true)
        .register()?;
    let inbox_deep = reg
        .event::<(u64, i32)>(INBOX_DEEP)
        .description(
            "a receive found its inbox at or above 3/4 of the queue capacity: \
             depth (messages, this one included), worker",
        )
        .category("demo_queues")
        .register()?;
    Ok(DemoVars {
        inbox_deep,
        depth,
        depth_hwm,
        depth_lwm,
        state,
        busy,
        per_peer,
        matrix,
        msg_size,
        in_flight,
    })
}
