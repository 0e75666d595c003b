//! Reading criterion's saved estimates, so a bench can print ratios from
//! the same run after `final_summary`: the point estimate and the fastest
//! sample of `<group>/<function>/<param>`, from criterion's
//! `new/estimates.json` and `new/sample.json`.
//!
//! A bench includes it with `#[path = "common/criterion_results.rs"] mod
//! criterion_results;`.

use std::path::PathBuf;

/// Where criterion wrote its estimates (same rule as criterion's own).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    "target/criterion".into()
}

/// The text of criterion's `new/<file>` of `group/function/param`.
fn read_result(group: &str, function: &str, param: &str, file: &str) -> Option<String> {
    let path = criterion_dir()
        .join(group)
        .join(function)
        .join(param)
        .join("new")
        .join(file);
    std::fs::read_to_string(path).ok()
}

/// Criterion's point estimate (ns per iteration) of `group/function/param`:
/// the slope of the linear fit (what criterion prints), else the mean.
pub fn estimate_ns(group: &str, function: &str, param: &str) -> Option<f64> {
    let text = read_result(group, function, param, "estimates.json")?;
    point_estimate(&text, "\"slope\"").or_else(|| point_estimate(&text, "\"mean\""))
}

/// The fastest sample's time per iteration (ns), from criterion's
/// `sample.json`: on a machine shared with other work, the least disturbed
/// sample is the better estimate of the cost itself.
pub fn best_sample_ns(group: &str, function: &str, param: &str) -> Option<f64> {
    let text = read_result(group, function, param, "sample.json")?;
    let iters = number_array(&text, "\"iters\":")?;
    let times = number_array(&text, "\"times\":")?;
    iters
        .iter()
        .zip(&times)
        .map(|(i, t)| t / i)
        .min_by(f64::total_cmp)
}

fn number_array(json: &str, key: &str) -> Option<Vec<f64>> {
    let rest = &json[json.find(key)? + key.len()..];
    let body = &rest[rest.find('[')? + 1..rest.find(']')?];
    body.split(',').map(|x| x.trim().parse().ok()).collect()
}

fn point_estimate(json: &str, key: &str) -> Option<f64> {
    const PE: &str = "\"point_estimate\":";
    let rest = &json[json.find(key)? + key.len()..];
    if !rest.starts_with(":{") {
        return None; // e.g. `"slope":null`
    }
    let est = &rest[rest.find(PE)? + PE.len()..];
    let end = est.find([',', '}'])?;
    est[..end].trim().parse().ok()
}
