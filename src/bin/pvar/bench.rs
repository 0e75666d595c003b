//! `pvar bench` (being written).

/// Options of `pvar bench`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `pvar bench`.
pub fn run(_args: Args) -> Result<(), Box<dyn std::error::Error>> {
    Err("not yet implemented".into())
}
