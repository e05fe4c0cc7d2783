//! Object storage: runs uploaded at their end (`--upload`) or later (`runbook upload`) to a real
//! S3-compatible server on 127.0.0.1 that checks every request's signature, and to a local
//! path; and `list`, `stats`, `status`, `report` reading the bucket, which must tell what the
//! same runs' local copies tell.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::s3::{ACCESS_KEY, BUCKET, S3Server, SECRET_KEY};
use crate::support::{TestContext, parse_events};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_up","part":{"id":"p1","messageID":"m1","sessionID":"ses_up","type":"step-start"}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":2,"sessionID":"ses_up","part":{"id":"p9","reason":"stop","messageID":"m1","sessionID":"ses_up","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0051}}"#;

/// A short run of the fake agent that says `words` and finishes cleanly.
fn saying(words: &str) -> String {
    let text = format!(
        r#"{{"type":"text","timestamp":1,"sessionID":"ses_up","part":{{"id":"t1","messageID":"m1","sessionID":"ses_up","type":"text","text":"{words}"}}}}"#
    );
    [STEP_START, &text, STEP_STOP].join("\n")
}

/// A test context whose runbook reaches `server` with its credentials.
fn context(server_root: &str) -> (TestContext, S3Server) {
    let mut ctx = TestContext::new();
    let server = S3Server::start(&ctx.root().join(server_root));
    for (k, v) in server.env() {
        ctx.env(&k, v);
    }
    (ctx, server)
}

fn id_of(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// The files of a run directory a person would look for in the bucket.
fn files_of(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn stdout_of(ctx: &TestContext, args: &[&str]) -> String {
    let out = ctx.run(args);
    out.assert_exit(0).assert_hides(SECRET_KEY);
    out.stdout
}

#[test]
fn runs_uploaded_to_s3_read_back_as_their_local_copies() {
    let (ctx, server) = context("s3");
    for words in ["first", "second"] {
        let out = ctx.run_fake(&saying(words), &["--upload", "s3://team-runs/nightly"]);
        out.assert_exit(0)
            .assert_stderr_has("uploaded to s3://team-runs/nightly/runs/")
            .assert_hides(SECRET_KEY);
    }
    let dirs = ctx.run_dirs();
    assert_eq!(dirs.len(), 2);
    for dir in &dirs {
        let id = id_of(dir);
        let names = files_of(dir);
        assert!(
            names.contains(&"result.json".to_owned())
                && names.contains(&"events.ndjson".to_owned())
        );
        for name in &names {
            let key = format!("nightly/runs/{id}/{name}");
            assert_eq!(
                server.object(&key).as_deref(),
                Some(std::fs::read(dir.join(name)).unwrap().as_slice()),
                "{key} is the local file byte for byte"
            );
        }
        // The receipt went last: its presence marks a whole upload.
        let puts: Vec<String> = server
            .requests()
            .into_iter()
            .filter(|(m, p)| m == "PUT" && p.contains(&id))
            .map(|(_, p)| p)
            .collect();
        assert_eq!(puts.len(), names.len(), "{puts:?}");
        assert!(puts.last().unwrap().ends_with("/result.json"), "{puts:?}");
    }
    ctx.assert_no_run_file_holds(SECRET_KEY);

    let bucket = "s3://team-runs/nightly";
    assert_eq!(
        json_lines(&stdout_of(&ctx, &["list", bucket, "--json"])),
        json_lines(&stdout_of(&ctx, &["list", "--json"])),
        "list --json: the bucket's runs are the local ones"
    );
    assert_eq!(
        stdout_of(&ctx, &["list", bucket, "--wide"]),
        stdout_of(&ctx, &["list", "--wide"])
    );
    let local: Value = serde_json::from_str(&stdout_of(&ctx, &["stats", "--json"])).unwrap();
    let remote: Value =
        serde_json::from_str(&stdout_of(&ctx, &["stats", bucket, "--json"])).unwrap();
    assert_eq!(remote, local, "stats over the bucket");
    assert_eq!(local["runs"], json!(2), "{local}");
    for dir in &dirs {
        let id = id_of(dir);
        let url = format!("{bucket}/runs/{id}");
        assert_eq!(
            stdout_of(&ctx, &["status", &url, "--json"]),
            stdout_of(&ctx, &["status", &id, "--json"])
        );
        assert_eq!(
            stdout_of(&ctx, &["status", &url]),
            stdout_of(&ctx, &["status", &id])
        );
        assert_eq!(
            stdout_of(&ctx, &["report", &url]),
            stdout_of(&ctx, &["report", &id])
        );
    }
    // A prefix that is not a run's is read as its latest run.
    assert_eq!(
        stdout_of(&ctx, &["status", bucket, "--json"]),
        stdout_of(&ctx, &["status", "--json"])
    );
}

#[test]
fn a_store_failing_mid_upload_is_retried_then_reported_and_nothing_local_changes_but_the_record() {
    let (ctx, server) = context("s3");
    // The event log fails once (then goes through on a retry); the receipt fails every time.
    let log_tries = Arc::new(AtomicUsize::new(0));
    let tries = Arc::clone(&log_tries);
    server.fail_when(move |method, path| {
        method == "PUT"
            && (path.ends_with("/result.json")
                || (path.ends_with("/events.ndjson") && tries.fetch_add(1, Ordering::SeqCst) == 0))
    });
    let out = ctx.run_fake(&saying("kept"), &["--upload", "s3://team-runs/nightly"]);
    let dir = ctx.run_dir();
    let id = id_of(&dir);
    out.assert_exit(0)
        .assert_stderr_has(&format!(
            "cannot upload the run to s3://team-runs/nightly/runs/{id}/"
        ))
        .assert_stderr_has("runbook upload")
        .assert_hides(SECRET_KEY);
    let puts = |file: &str| {
        server
            .requests()
            .iter()
            .filter(|(m, p)| m == "PUT" && p.ends_with(&format!("{id}/{file}")))
            .count()
    };
    assert_eq!(
        puts("events.ndjson"),
        2,
        "the failed request was tried again"
    );
    assert_eq!(puts("result.json"), 5, "tried, then retried 4 times");
    assert!(
        server
            .object(&format!("nightly/runs/{id}/events.ndjson"))
            .is_some()
    );
    assert!(
        server
            .object(&format!("nightly/runs/{id}/result.json"))
            .is_none()
    );

    // Nothing local deleted; the failure is an event in the log and a record in the receipt.
    let receipt = ctx.receipt();
    assert_eq!(receipt.outcome, runbook::event::Outcome::Completed);
    let failed = receipt
        .upload_failed
        .expect("the receipt records the failed upload");
    assert_eq!(failed.url, format!("s3://team-runs/nightly/runs/{id}/"));
    assert!(failed.error.contains("500"), "{}", failed.error);
    let events = parse_events(&std::fs::read_to_string(dir.join("events.ndjson")).unwrap());
    let last = events.last().unwrap();
    assert_eq!(last.kind.type_name(), "upload.failed");
    assert_eq!(last.seq, events[events.len() - 2].seq + 1);
    assert_eq!(events[events.len() - 2].kind.type_name(), "run.finished");
    ctx.assert_no_run_file_holds(SECRET_KEY);

    // In the bucket, the run without its receipt is not taken as whole.
    let stats: Value = serde_json::from_str(&stdout_of(
        &ctx,
        &["stats", "s3://team-runs/nightly", "--json"],
    ))
    .unwrap();
    assert_eq!(stats["runs"], json!(0), "{stats}");
    assert_eq!(stats["skipped"]["not uploaded whole"], json!(1), "{stats}");
    let out = ctx.run(&[
        "status",
        &format!("s3://team-runs/nightly/runs/{id}"),
        "--json",
    ]);
    out.assert_exit(0);
    let told: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        told["outcome"],
        json!("completed"),
        "its log reaches run.finished"
    );

    // Once the store works again, `runbook upload` finishes the job and clears the record.
    server.fail_when(|_, _| false);
    let out = ctx.run(&["upload", &id, "--to", "s3://team-runs/nightly"]);
    out.assert_exit(0)
        .assert_stderr_has("uploaded to s3://team-runs/nightly/runs/");
    assert!(ctx.receipt().upload_failed.is_none());
    assert_eq!(
        server
            .object(&format!("nightly/runs/{id}/result.json"))
            .unwrap(),
        std::fs::read(dir.join("result.json")).unwrap()
    );
    let out = ctx.run(&["upload", "--all", "--to", "s3://team-runs/nightly"]);
    out.assert_exit(0)
        .assert_stderr_has("0 uploaded, 1 already in s3://team-runs/nightly");
}

#[test]
fn upload_all_pushes_runs_made_offline_and_skips_those_already_there() {
    let (ctx, server) = context("s3");
    ctx.run_fake(&saying("offline one"), &[]).assert_exit(0);
    ctx.run_fake(&saying("offline two"), &[]).assert_exit(0);
    let out = ctx.run(&["upload", "--all", "--to", "s3://team-runs/late"]);
    out.assert_exit(0)
        .assert_stderr_has("2 uploaded, 0 already in s3://team-runs/late");
    for dir in ctx.run_dirs() {
        assert!(
            server
                .object(&format!("late/runs/{}/result.json", id_of(&dir)))
                .is_some()
        );
    }
    ctx.run_fake(&saying("offline three"), &[]).assert_exit(0);
    // The `upload` setting is where it goes when no --to is given.
    let mut ctx = ctx;
    ctx.env("RUNBOOK_UPLOAD", "s3://team-runs/late");
    let out = ctx.run(&["upload", "--all"]);
    out.assert_exit(0)
        .assert_stderr_has("1 uploaded, 2 already in s3://team-runs/late");
}

#[test]
fn a_wrong_secret_is_refused_by_the_server_and_credentials_are_never_shown() {
    let (mut ctx, _server) = context("s3");
    let wrong = "wrong-secret-Qq81LmZ0";
    ctx.env("AWS_SECRET_ACCESS_KEY", wrong);
    let out = ctx.run(&["list", "s3://team-runs/any"]);
    out.assert_exit(6);
    out.assert_stderr_has("403").assert_hides(wrong);
    // Credentials written into a URL are masked wherever the URL is told.
    let url = "s3://AKIAINURL0001:in-url-secret-77Hx@team-runs/any?sig=query-secret-55Jk";
    let out = ctx.run(&["stats", url]);
    out.assert_hides("in-url-secret-77Hx")
        .assert_hides("query-secret-55Jk")
        .assert_hides(ACCESS_KEY)
        .assert_hides("AKIAINURL0001");
    // A run's failed upload records no credential either.
    let out = ctx.run_fake(&saying("refused"), &["--upload", url]);
    out.assert_exit(0)
        .assert_stderr_has("cannot upload the run to s3://[REDACTED]:[REDACTED]@team-runs/any")
        .assert_hides("in-url-secret-77Hx")
        .assert_hides(wrong);
    ctx.assert_no_run_file_holds("in-url-secret-77Hx");
    let mut ctx = ctx;
    ctx.env("RUNBOOK_UPLOAD", url);
    ctx.run(&["config"])
        .assert_exit(0)
        .assert_stdout_has("upload")
        .assert_hides("in-url-secret-77Hx")
        .assert_hides("query-secret-55Jk");
    ctx.assert_no_run_file_holds("query-secret-55Jk");
    ctx.assert_no_run_file_holds(wrong);
}

#[test]
fn a_bucket_of_1100_runs_is_listed_page_by_page_and_summed() {
    let (ctx, server) = context("s3");
    let runs = server.root.join(BUCKET).join("big").join("runs");
    let mut usd = 0.0;
    for i in 0..1100u32 {
        let id = format!("20261120-{:06}-r{i:04}", 100_000 + i);
        let cost = f64::from(i % 7) * 0.25;
        usd += cost;
        let body = crate::stats::receipt(json!({
            "run_id": id,
            "started_at": format!("2026-11-20T10:{:02}:{:02}Z", (i / 60) % 60, i % 60),
            "cost": {"usd": cost, "source": "reported", "known_usd": cost},
        }));
        std::fs::create_dir_all(runs.join(&id)).unwrap();
        std::fs::write(runs.join(&id).join("result.json"), body.to_string()).unwrap();
    }
    let stats: Value =
        serde_json::from_str(&stdout_of(&ctx, &["stats", "s3://team-runs/big", "--json"])).unwrap();
    assert_eq!(stats["runs"], json!(1100), "{stats}");
    let told = stats["cost"]["total_usd"].as_f64().unwrap();
    assert!((told - usd).abs() < 1e-6, "{told} != {usd}");
    let lists = server
        .requests()
        .iter()
        .filter(|(m, p)| m == "GET" && p == &format!("/{BUCKET}"))
        .count();
    assert_eq!(lists, 2, "1,100 keys are two pages of 1,000");
    let listed = stdout_of(&ctx, &["list", "s3://team-runs/big", "--all", "--json"]);
    assert_eq!(listed.lines().count(), 1100);
}

#[test]
fn a_local_path_bucket_holds_the_same_runs() {
    let ctx = TestContext::new();
    let place = ctx.root().join("shelf");
    let url = format!("file://{}", place.display());
    ctx.run_fake(&saying("to a shelf"), &["--upload", &url])
        .assert_exit(0);
    let dir = ctx.run_dir();
    let id = id_of(&dir);
    for name in files_of(&dir) {
        assert_eq!(
            std::fs::read(place.join("runs").join(&id).join(&name)).unwrap(),
            std::fs::read(dir.join(&name)).unwrap(),
            "{name}"
        );
    }
    assert_eq!(
        stdout_of(&ctx, &["stats", &url, "--json"]),
        stdout_of(&ctx, &["stats", "--json"])
    );
    assert_eq!(
        stdout_of(&ctx, &["list", &url, "--json"]),
        stdout_of(&ctx, &["list", "--json"])
    );
}
