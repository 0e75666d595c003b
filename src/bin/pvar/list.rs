//! `pvar list` (being written).

/// Options of `pvar list`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pvar list`.
pub fn run(_args: Args) -> Result<(), Box<dyn std::error::Error>> {
    Err("not yet implemented".into())
}
