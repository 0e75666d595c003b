//! A pseudo-terminal for the terminal tests of the `pvar` command:
//! util-linux's `script` (Debian package `bsdutils`) runs a command on one.
//!
//! A test includes it with `#[path = "../../tests/support/script_tty.rs"]
//! mod script_tty;` and starts with `if !script_tty::available("…") {
//! return; }`. Without `script` that prints a loud `SKIPPED: …` line and
//! the test passes, unless `CI` or `PVAR_REQUIRE_SCRIPT` is set (then it
//! fails): `scripts/test.sh` sets it once it has checked `script` is there,
//! so a full run cannot pass these tests without running them.

use std::process::Command;

/// The variable that makes a missing `script` fail the test.
pub const REQUIRE: &str = "PVAR_REQUIRE_SCRIPT";

/// Whether a missing `script` must fail the test.
fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os(REQUIRE).is_some()
}

/// Whether `script` runs here. If not: a `SKIPPED` line naming `what` and
/// `false`, or a panic when it is required.
pub fn available(what: &str) -> bool {
    let probe = Command::new("script").arg("--version").output();
    if probe.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let why = match probe {
        Err(e) => format!("`script` not runnable: {e}"),
        Ok(o) => format!("`script --version` failed: {}", o.status),
    };
    assert!(
        !required(),
        "`script` (util-linux / bsdutils) is required (CI / {REQUIRE}) for {what}: {why}"
    );
    eprintln!("SKIPPED: {what}: {why} (install util-linux / bsdutils)");
    false
}

/// Runs test `name` of the current test binary alone with `script` out of
/// reach (an empty `PATH`) and `PVAR_REQUIRE_SCRIPT=1`: whether it failed,
/// as a gated test must.
#[allow(dead_code)] // each test binary uses what it needs
pub fn fails_without_script_when_required(name: &str) -> bool {
    let empty = std::env::temp_dir().join(format!("pvar-no-script-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads", "1"])
        .env("PATH", &empty)
        .env(REQUIRE, "1")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("running 1 test"),
        "no test named {name}:\n{stdout}"
    );
    // libtest prints a failed test's panic message with its output.
    let said = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    !out.status.success() && said.contains(REQUIRE)
}
