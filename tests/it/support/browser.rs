//! Headless Chromium for the tests of the stats page: the page laid out in a window of a given
//! width, light or dark, and measured in its DOM by `page_check.js` (what leaves the window or
//! its box, which texts overlap, the numbers and colours it shows); and screenshots. A missing
//! Chromium fails the test, saying how to install it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one Chromium may take.
const LIMIT: Duration = Duration::from_secs(120);

/// The checker laid into a copy of the page.
const CHECK: &str = include_str!("page_check.js");

/// Debian's Chromium (`/usr/bin/chromium`), or `RUNBOOK_CHROMIUM`.
pub fn chromium() -> PathBuf {
    let found = std::env::var_os("RUNBOOK_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("chromium"))
                    .find(|p| p.is_file())
            })
        });
    match found {
        Some(path) => path,
        None => panic!(
            "chromium is not installed, and the stats page is tested in it: run .ci/install-agents \
             (it installs Debian's `chromium`), or set RUNBOOK_CHROMIUM to a Chromium binary"
        ),
    }
}

/// One look at a page.
pub struct Look {
    /// The window's width in CSS pixels.
    pub width: u32,
    /// Whether the reader's system asks for dark pages.
    pub dark: bool,
}

/// Runs Chromium on `url` with `extra` arguments; its stdout.
fn run(look: &Look, height: u32, scratch: &Path, url: &str, extra: &[String]) -> String {
    let profile = scratch.join("chromium-profile");
    let out = scratch.join(format!("chromium-{}-{}.out", look.width, look.dark));
    let file = std::fs::File::create(&out).unwrap();
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={},{height}", look.width))
    .args(look.dark.then_some("--force-dark-mode"))
    .args(extra)
    .arg(url)
    .env("HOME", scratch)
    .stdin(Stdio::null())
    .stdout(file)
    .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium took longer than {LIMIT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed on {url}: {status}");
    std::fs::read_to_string(&out).unwrap()
}

/// The page at `page` as `look` lays it out, measured by the checker: `width`, `dark`,
/// `background`, `text` (computed colours), `scripts`, `foreign_elements`, `problems` (what a
/// reader would see broken), `figures` (each `data-figure` and card by its text) and `fills`
/// (each outcome's bar colour).
pub fn check(page: &Path, scratch: &Path, look: &Look) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("</body>"), "a whole page");
    let checked = scratch.join("checked.html");
    let script = format!("<script id=\"page-checker\">{CHECK}</script></body>");
    std::fs::write(&checked, html.replacen("</body>", &script, 1)).unwrap();
    let dom = run(
        look,
        2000,
        scratch,
        &format!("file://{}", checked.display()),
        &["--dump-dom".to_owned()],
    );
    let start = dom.rfind("<pre id=\"page-check\">").unwrap_or_else(|| {
        panic!(
            "the checker wrote no result: {}",
            &dom[..dom.len().min(500)]
        )
    }) + "<pre id=\"page-check\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let result: Value = serde_json::from_str(&dom[start..end]).unwrap();
    assert_eq!(result["width"], look.width, "the window's width");
    assert_eq!(result["dark"], look.dark, "the colour scheme asked for");
    result
}

/// A screenshot of the top `height` pixels of the page at `page`, into `png`.
pub fn screenshot(page: &Path, scratch: &Path, look: &Look, height: u32, png: &Path) {
    let _ = std::fs::remove_file(png);
    run(
        look,
        height,
        scratch,
        &format!("file://{}", page.display()),
        &[format!("--screenshot={}", png.display())],
    );
    assert!(
        png.metadata().is_ok_and(|m| m.len() > 10_000),
        "a screenshot at {}",
        png.display()
    );
}

/// The red, green and blue of a computed CSS colour (`rgb(26, 127, 55)`).
pub fn rgb(css: &Value) -> (u8, u8, u8) {
    let text = css.as_str().unwrap_or_default();
    let numbers: Vec<u8> = text
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    assert!(numbers.len() >= 3, "a colour: {text}");
    (numbers[0], numbers[1], numbers[2])
}
