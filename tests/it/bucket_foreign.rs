//! Object storage whose servers are not to be trusted: credentials fetched while runbook runs
//! (here from a container-credentials endpoint on 127.0.0.1, as EKS Pod Identity hands them out)
//! are masked wherever a server echoes them, and a server's error text reaches the terminal, the
//! event log and the receipt as one line without control characters.

use serde_json::{Value, json};

use crate::support::TestContext;
use crate::support::sse::{Answer, FakeBody, Received, Server, json_response};

/// What the credentials endpoint hands out. The token has the characters a real session token
/// has, which a URL writes percent-encoded.
const KEY_ID: &str = "ASIAFETCHEDKEY0001";
const SECRET: &str = "fetched-secret-Vv72Lp";
const TOKEN: &str = "IQoJb3JpZ2luX2Vj/fetched+session/token==Qm93";
/// The bearer token the pod presents to the credentials endpoint.
const BEARER: &str = "pod-identity-bearer-Zx81Kd";

const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_f","part":{"id":"p1","messageID":"m1","sessionID":"ses_f","type":"step-start"}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":2,"sessionID":"ses_f","part":{"id":"p9","reason":"stop","messageID":"m1","sessionID":"ses_f","type":"step-finish","tokens":{"total":10,"input":5,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

/// What a refusing server answers to the request it received.
type Refuse = fn(&Received) -> String;

/// Each way a refusing server may echo the request: what it does, and how.
fn refusals() -> Vec<(&'static str, Refuse)> {
    vec![
        ("the token in an XML error", |r| {
            format!(
                "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>token {} refused</Message></Error>",
                r.header("x-amz-security-token").unwrap_or_default()
            )
        }),
        ("the request's headers, a line each", |r| {
            let mut body = String::from("AccessDenied\n");
            for (name, value) in &r.headers {
                body.push_str(&format!("{name}: {value}\n"));
            }
            body
        }),
        ("the URL, credentials in its query", |r| {
            let enc = |s: &str| {
                s.replace('/', "%2F")
                    .replace('+', "%2B")
                    .replace('=', "%3D")
            };
            format!(
                "<Error><Code>AccessDenied</Code>\n<Resource>{}?X-Amz-Credential={}&X-Amz-Security-Token={}</Resource>\n</Error>",
                r.path,
                KEY_ID,
                enc(r.header("x-amz-security-token").unwrap_or_default())
            )
        }),
        ("escape sequences and many lines", |r| {
            format!(
                "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mdenied\r\n{}\n\n\n\u{1b}[0mline 5\nline 6\nline 7\nline 8\n{}",
                r.header("authorization").unwrap_or_default(),
                "x".repeat(20_000)
            )
        }),
    ]
}

/// A server on 127.0.0.1 that hands out credentials at `/creds` to a caller presenting
/// [`BEARER`], and refuses every storage request with a 403 whose body `refuse` makes.
fn foreign(refuse: Refuse) -> Server {
    Server::start("foreign-s3", move |r| {
        if r.path == "/creds" {
            assert_eq!(r.header("authorization"), Some(BEARER));
            return Answer::Respond(json_response(
                200,
                &[],
                &json!({
                    "AccessKeyId": KEY_ID,
                    "SecretAccessKey": SECRET,
                    "Token": TOKEN,
                    "Expiration": "2099-01-01T00:00:00Z",
                }),
            ));
        }
        let body = refuse(&r);
        Answer::Respond(
            hyper::Response::builder()
                .status(403)
                .header("content-type", "application/xml")
                .body(FakeBody::full(body))
                .unwrap(),
        )
    })
}

/// runbook reaching `server` for both its credentials and its storage, with no credential of
/// its own.
fn context(server: &Server) -> TestContext {
    let mut ctx = TestContext::new();
    let bearer = ctx.root().join("eks-token");
    std::fs::write(&bearer, BEARER).unwrap();
    let base = format!("http://127.0.0.1:{}", server.port());
    ctx.env(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        format!("{base}/creds"),
    )
    .env(
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        bearer.display().to_string(),
    )
    .env("AWS_REGION", "us-east-1")
    .env("AWS_ENDPOINT", base)
    .env("AWS_ALLOW_HTTP", "true");
    ctx
}

/// Fails unless none of the credentials, however a URL spells them, is in `text`.
#[track_caller]
fn assert_no_credential(what: &str, text: &str) {
    let encoded = TOKEN
        .replace('/', "%2F")
        .replace('+', "%2B")
        .replace('=', "%3D");
    for secret in [
        KEY_ID,
        SECRET,
        TOKEN,
        encoded.as_str(),
        BEARER,
        "Vv72Lp",
        "Qm93",
    ] {
        assert!(!text.contains(secret), "{what}: {secret:?} in\n{text}");
    }
}

/// Fails unless `text` is one line of printable text.
#[track_caller]
fn assert_one_clean_line(what: &str, text: &str) {
    assert!(
        !text.chars().any(char::is_control),
        "{what} is not one clean line:\n{text:?}"
    );
    assert!(text.chars().count() <= 1000, "{what} is not cut:\n{text}");
}

#[test]
fn a_refusal_echoing_fetched_credentials_is_one_masked_line_everywhere() {
    for (what, refuse) in refusals() {
        let server = foreign(refuse);
        let ctx = context(&server);
        let scenario = [STEP_START, STEP_STOP].join("\n");
        let out = ctx.run_fake(&scenario, &["--upload", "s3://team-runs/p"]);
        out.assert_exit(0);
        assert_no_credential(what, &out.stderr);
        assert_no_credential(what, &out.stdout);
        let told: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("cannot upload the run"))
            .collect();
        assert_eq!(told.len(), 1, "{what}:\n{}", out.stderr);
        assert!(told[0].contains("403"), "{what}: {}", told[0]);
        assert!(told[0].contains("runbook upload"), "{what}: {}", told[0]);
        assert_one_clean_line(what, told[0]);
        let after: Vec<&str> = out
            .stderr
            .lines()
            .skip_while(|l| !l.contains("cannot upload the run"))
            .skip(1)
            .collect();
        assert!(after.is_empty(), "{what}: more lines:\n{}", out.stderr);

        let dir = ctx.run_dir();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert_no_credential(&format!("{what}: {}", path.display()), &text);
        }
        let receipt: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        let error = receipt["upload_failed"]["error"].as_str().unwrap();
        assert!(error.contains("403"), "{what}: {error}");
        assert_one_clean_line(what, error);
        let last = ctx.events().pop().unwrap();
        assert_eq!(last.kind.type_name(), "upload.failed");
        let logged = serde_json::to_value(&last).unwrap();
        assert_one_clean_line(what, logged["error"].as_str().unwrap_or_default());

        let out = ctx.run(&["list", "s3://team-runs/p"]);
        out.assert_exit(6);
        assert_no_credential(what, &out.stderr);
        let error = out.stderr.trim_end();
        assert!(error.contains("403"), "{what}: {error}");
        assert_one_clean_line(what, error);
    }
}

/// How the listing server pages.
#[derive(Clone, Copy)]
enum Listing {
    /// Two keys a page, in key order, from the token or after `start-after`, as S3 does.
    Honest,
    /// The first page whatever is asked, with the same continuation token every time.
    Looping,
}

/// A server on 127.0.0.1 answering `ListObjectsV2` over `objects` (key and body) and `GET`
/// of each object, keys as it is given them, whatever they hold.
fn lister(objects: Vec<(String, String)>, listing: Listing) -> Server {
    let mut objects = objects;
    objects.sort();
    Server::start("listing-s3", move |r| {
        let query: Vec<(String, String)> =
            url::form_urlencoded::parse(r.query.as_deref().unwrap_or_default().as_bytes())
                .into_owned()
                .collect();
        let param = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if r.path != "/team-runs" {
            let key = r.path.trim_start_matches("/team-runs/");
            return Answer::Respond(match objects.iter().find(|(k, _)| k == key) {
                Some((_, body)) => hyper::Response::builder()
                    .status(200)
                    .body(FakeBody::full(body.clone()))
                    .unwrap(),
                None => json_response(404, &[], &json!({})),
            });
        }
        let prefix = param("prefix").unwrap_or_default();
        let under: Vec<&(String, String)> = objects
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .collect();
        let (start, token) = match listing {
            Listing::Looping => (0, Some("loop-token".to_owned())),
            Listing::Honest => {
                let start = match (param("continuation-token"), param("start-after")) {
                    (Some(t), _) => t.parse().unwrap(),
                    (None, Some(after)) => under.partition_point(|(k, _)| *k <= after),
                    (None, None) => 0,
                };
                let size = param("max-keys").map_or(2, |m| m.parse::<usize>().unwrap().min(2));
                let end = (start + size).min(under.len());
                (start, (end < under.len()).then(|| end.to_string()))
            }
        };
        let size = param("max-keys").map_or(2, |m| m.parse::<usize>().unwrap().min(2));
        let contents: String = under
            .iter()
            .skip(start)
            .take(size)
            .map(|(k, body)| {
                format!(
                    "<Contents><Key>{}</Key><LastModified>2026-11-20T10:00:00.000Z</LastModified><ETag>\"e\"</ETag><Size>{}</Size></Contents>",
                    k.replace('&', "&amp;").replace('<', "&lt;"),
                    body.len()
                )
            })
            .collect();
        let next = token.map_or_else(String::new, |t| {
            format!("<NextContinuationToken>{t}</NextContinuationToken>")
        });
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>team-runs</Name><Prefix>{prefix}</Prefix><IsTruncated>{}</IsTruncated>{contents}{next}</ListBucketResult>",
            !next.is_empty()
        );
        Answer::Respond(
            hyper::Response::builder()
                .status(200)
                .header("content-type", "application/xml")
                .body(FakeBody::full(body))
                .unwrap(),
        )
    })
}

/// runbook reaching `server` as its S3 store, with static credentials.
fn listing_context(server: &Server) -> TestContext {
    let mut ctx = TestContext::new();
    ctx.env("AWS_ACCESS_KEY_ID", "AKIALISTING0001")
        .env("AWS_SECRET_ACCESS_KEY", "listing-secret-0001")
        .env("AWS_REGION", "us-east-1")
        .env(
            "AWS_ENDPOINT",
            format!("http://127.0.0.1:{}", server.port()),
        )
        .env("AWS_ALLOW_HTTP", "true");
    ctx
}

/// A receipt of the run `id`, as a bucket holds it.
fn receipt_of(id: &str, minute: u32) -> String {
    crate::stats::receipt(json!({
        "run_id": id,
        "started_at": format!("2026-11-20T10:{minute:02}:00Z"),
    }))
    .to_string()
}

#[test]
fn a_key_no_store_path_names_is_skipped_and_counted_once_and_the_rest_is_read() {
    let mut objects: Vec<(String, String)> = (0..3)
        .map(|i| {
            let id = format!("20261120-10000{i}-good{i}");
            (format!("p/runs/{id}/result.json"), receipt_of(&id, i))
        })
        .collect();
    for key in [
        "p/runs//20261120-100003-bad01/result.json",
        "p/runs//20261120-100003-bad01/events.ndjson",
        "p/runs/../20261120-100004-bad02/result.json",
        "p/junk//notes.txt",
    ] {
        objects.push((key.to_owned(), receipt_of("20261120-100003-bad01", 3)));
    }
    let server = lister(objects, Listing::Honest);
    let ctx = listing_context(&server);
    let out = ctx.run(&["stats", "s3://team-runs/p", "--json"]);
    out.assert_exit(0);
    let stats: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["runs"], json!(3), "{stats}");
    assert_eq!(
        stats["skipped"],
        json!({"of an unusable key": 2}),
        "{stats}"
    );

    let out = ctx.run(&["stats", "s3://team-runs/p"]);
    out.assert_exit(0);
    let told = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(
        told.matches("unusable key").count(),
        1,
        "said once:\n{told}"
    );
    assert!(
        told.contains("2 receipts skipped: 2 of an unusable key"),
        "{told}"
    );

    let out = ctx.run(&["list", "s3://team-runs/p"]);
    out.assert_exit(0);
    for i in 0..3 {
        out.assert_stdout_has(&format!("good{i}"));
    }
    assert_eq!(
        out.stderr.matches("skipping 2 runs").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn a_listing_that_gives_its_page_token_again_ends_with_a_warning() {
    let id = "20261120-100000-loop1";
    let objects = vec![(format!("p/runs/{id}/result.json"), receipt_of(id, 0))];
    let server = lister(objects, Listing::Looping);
    let ctx = listing_context(&server);
    let out = crate::support::run(
        &mut ctx.runbook(&["stats", "s3://team-runs/p", "--json"]),
        std::time::Duration::from_secs(30),
    );
    out.assert_exit(0);
    let stats: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(stats["runs"], json!(1), "{stats}");
    let warned: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("page token it had given before"))
        .collect();
    assert_eq!(warned.len(), 1, "{}", out.stderr);
    assert!(warned[0].contains("s3://team-runs/p"), "{}", warned[0]);
}
