//! `pvar demo` (being written).

/// Options of `pvar demo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pvar demo`.
pub fn run(_args: Args) -> Result<(), Box<dyn std::error::Error>> {
    Err("not yet implemented".into())
}
