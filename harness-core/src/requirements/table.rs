//! The 68 rows: every normative statement of A2A 1.0 whose subject is the client, with the
//! rules that judge it, or why none does. Rows are paraphrases of `docs/specification.md` at
//! a2aproject/A2A commit 16ba526 (v1.0.1 plus §7.6.4) and `specification/a2a.proto`.

use super::Coverage::{HandedOn, NotAutomatable, Rules};
use super::{FOLLOW_UP, Requirement};
use crate::rules::Level::{May, Must, Should};

/// One row: id, section, keyword, level, paraphrase, coverage, note.
macro_rules! row {
    ($id:literal, $sec:literal, $kw:literal, $lvl:expr, $req:literal, $cov:expr) => {
        row!($id, $sec, $kw, $lvl, $req, $cov, None)
    };
    ($id:literal, $sec:literal, $kw:literal, $lvl:expr, $req:literal, $cov:expr, $note:expr) => {
        Requirement {
            id: $id,
            section: $sec,
            keyword: $kw,
            level: $lvl,
            requirement: $req,
            coverage: $cov,
            note: $note,
        }
    };
}

/// Why retrieving keys over HTTPS is not judged yet.
const KEYS_OVER_HTTPS: &str = "the delegator's trusted keys come from init.card_signatures (a key store, §8.4.3 MAY), so nothing has to be retrieved, and a key found through a card's jku is not trusted by that alone (DLG-SIGN-02). Judging it needs a way to tell the delegator to trust keys fetched from a jku (init carries none) and a case whose jku is plain HTTP beside an HTTPS one";
/// Why credentials over encrypted connections only is not judged yet.
const CREDENTIALS_ENCRYPTED: &str = "in run --tls every agent is HTTPS and DLG-TLS-02 fails a delegator that falls back to a plain-HTTP interface, but no case offers a credential-requiring skill on a plain-HTTP interface only, to see the credential withheld; and rotation is the deployment's schedule over time, not one run's traffic";

/// Why webhook URLs over HTTPS are not judged yet.
const WEBHOOK_TLS: &str = "the webhook receiver is the delegator's own server: serving it over TLS needs a server certificate and key handed to the delegator, which the driver contract does not carry yet; the harness gives init.webhook_base_url http://127.0.0.1:0 and the mock agents deliver pushes over plain HTTP";

/// Every client requirement of A2A 1.0, C-01..C-68 in order.
pub static REQUIREMENTS: [Requirement; 68] = [
    row!(
        "C-01",
        "§3.6.1",
        "MUST",
        Must,
        "Send A2A-Version (Major.Minor) on every request.",
        Rules(&["DLG-SEND-04"])
    ),
    row!(
        "C-02",
        "§3.6.1",
        "MAY",
        May,
        "May send A2A-Version as a request (query) parameter instead of a header.",
        Rules(&["DLG-SEND-04"])
    ),
    row!(
        "C-03",
        "§3.6",
        "SHOULD NOT",
        Should,
        "No patch numbers in requests: send 1.0, not 1.0.1.",
        Rules(&["DLG-SEND-10"])
    ),
    row!(
        "C-04",
        "§3.6",
        "MUST NOT",
        Must,
        "Patch numbers do not count when negotiating: a card saying 1.0.3 is 1.0.",
        Rules(&["DLG-CARD-01"])
    ),
    row!(
        "C-05",
        "§3.6.3",
        "MUST (tooling)",
        Must,
        "Client SDKs and tooling provide transport and version negotiation.",
        Rules(&[
            "DLG-ROUTE-03",
            "DLG-ROUTE-04",
            "DLG-ROUTE-05",
            "DLG-CARD-01"
        ])
    ),
    row!(
        "C-06",
        "§9.2, §10.2, §11.2",
        "MUST",
        Must,
        "Service parameters go as HTTP headers or gRPC metadata.",
        Rules(&["DLG-EXT-01"]),
        Some(
            "A2A-Version, the other service parameter, may also travel as a query parameter (§3.6.1 MAY, C-02): DLG-SEND-04 accepts both, so A2A-Extensions is what this row judges"
        )
    ),
    row!(
        "C-07",
        "§9.2, §10.2, §11.2",
        "SHOULD",
        Should,
        "Several values of one service parameter are comma-joined in one header or metadata entry.",
        Rules(&["DLG-EXT-02"])
    ),
    row!(
        "C-08",
        "§9.3",
        "MUST",
        Must,
        "JSON-RPC requests use the JSON-RPC 2.0 envelope.",
        Rules(&["DLG-WIRE-02"])
    ),
    row!(
        "C-09",
        "§5.5, §14.1.1",
        "MUST",
        Must,
        "Request JSON uses camelCase field names, ProtoJSON enum names and UTF-8.",
        Rules(&["DLG-WIRE-01"])
    ),
    row!(
        "C-10",
        "§5.7",
        "MUST",
        Must,
        "REQUIRED fields are present in requests; required arrays are not empty.",
        Rules(&["DLG-WIRE-01"])
    ),
    row!(
        "C-11",
        "§5.6.1",
        "MUST / MUST NOT",
        Must,
        "Timestamps the client generates are ISO 8601 UTC with Z (SHOULD: millisecond precision).",
        Rules(&["DLG-WIRE-01"])
    ),
    row!(
        "C-12",
        "§5.6.1",
        "MUST",
        Must,
        "ISO 8601 timestamps are parsed correctly.",
        Rules(&["DLG-WIRE-03"])
    ),
    row!(
        "C-13",
        "§5.7",
        "SHOULD",
        Should,
        "Unrecognized fields are ignored.",
        Rules(&["DLG-STATE-02", "DLG-ART-04", "DLG-WIRE-01"])
    ),
    row!(
        "C-14",
        "§5.7",
        "SHOULD",
        Should,
        "REQUIRED fields of received messages are validated; messages missing them are rejected.",
        Rules(&["DLG-ART-09"])
    ),
    row!(
        "C-15",
        "§11.1",
        "SHOULD",
        Should,
        "HTTP+JSON requests use Content-Type: application/a2a+json.",
        Rules(&["DLG-REST-01"])
    ),
    row!(
        "C-16",
        "§11.5",
        "MUST",
        Must,
        "HTTP+JSON GET and DELETE parameters travel in the path or query with camelCase names, RFC 3986 encoding and no nested objects.",
        Rules(&["DLG-REST-02"])
    ),
    row!(
        "C-17",
        "§8.3.2 (1, 2)",
        "MUST",
        Must,
        "supportedInterfaces is parsed and the first entry whose binding and version the client supports is used.",
        Rules(&["DLG-ROUTE-05", "DLG-ROUTE-04", "DLG-ROUTE-03"])
    ),
    row!(
        "C-18",
        "§8.3.2 (3)",
        "MUST",
        Must,
        "The URL of the selected interface is used.",
        Rules(&["DLG-ROUTE-07"])
    ),
    row!(
        "C-19",
        "§8.3.2 (4); proto AgentInterface.tenant",
        "MUST",
        Must,
        "The selected interface's tenant is put in every request (omitted when unset).",
        Rules(&["DLG-ROUTE-07"])
    ),
    row!(
        "C-20",
        "§5.2",
        "MAY",
        May,
        "Any protocol binding the agent declares may be used.",
        Rules(&["DLG-ROUTE-04"])
    ),
    row!(
        "C-21",
        "§5.2",
        "SHOULD",
        Should,
        "Fallback to alternative protocol bindings is implemented.",
        Rules(&["DLG-ROUTE-08"])
    ),
    row!(
        "C-22",
        "§3.3.4",
        "SHOULD",
        Should,
        "Agent Card capabilities are checked before optional ones are used (streaming, push notifications, extended card).",
        Rules(&["DLG-ROUTE-09"]),
        Some(
            "streaming is judged by DLG-ROUTE-02, which also asks for streaming when a request prefers it (a delegation rule, not this row's): it is not counted here"
        )
    ),
    row!(
        "C-23",
        "§8.6, §8.6.2",
        "SHOULD",
        Should,
        "HTTP caching (RFC 9111) is honoured when fetching Agent Cards.",
        Rules(&["DLG-CARD-02"])
    ),
    row!(
        "C-24",
        "§8.6.2",
        "SHOULD",
        Should,
        "An expired cached card is revalidated with If-None-Match or If-Modified-Since.",
        Rules(&["DLG-CARD-03"])
    ),
    row!(
        "C-25",
        "§8.6.2",
        "MAY",
        May,
        "Without caching headers, a default cache duration may be applied.",
        Rules(&["DLG-CARD-02"])
    ),
    row!(
        "C-26",
        "§3.1.11",
        "MUST",
        Must,
        "GetExtendedAgentCard is authenticated with a scheme from the public card's security fields.",
        Rules(&["DLG-CARD-04"])
    ),
    row!(
        "C-27",
        "§3.1.11, §13.3",
        "SHOULD",
        Should,
        "The extended card replaces the cached public card for the authenticated session or until the version changes.",
        Rules(&["DLG-CARD-05"])
    ),
    row!(
        "C-28",
        "§8.4.3",
        "MUST",
        Must,
        "A card signature is verified by the procedure of §8.4.3: key from kid/jku or a key store, defaults dropped, signatures excluded, JCS (RFC 8785) canonical form.",
        Rules(&["DLG-SIGN-01", "DLG-SIGN-02"])
    ),
    row!(
        "C-29",
        "§8.4.3, §14.3",
        "SHOULD",
        Should,
        "At least one signature (when present) is verified before a card is trusted.",
        Rules(&["DLG-SIGN-03"])
    ),
    row!(
        "C-30",
        "§8.4.3",
        "SHOULD",
        Should,
        "Public keys are retrieved over HTTPS.",
        HandedOn {
            to: FOLLOW_UP,
            why: KEYS_OVER_HTTPS
        }
    ),
    row!(
        "C-31",
        "§8.4.3",
        "MUST NOT",
        Must,
        "Expired or revoked keys are never used to verify.",
        Rules(&["DLG-SIGN-02"])
    ),
    row!(
        "C-32",
        "§8.4.3",
        "MAY",
        May,
        "A trusted key store may be kept.",
        Rules(&["DLG-SIGN-01"])
    ),
    row!(
        "C-33",
        "§3.4.1",
        "SHOULD NOT",
        Should,
        "No client-generated contextId is sent unless the client knows how the server treats it.",
        Rules(&["DLG-CTX-01"])
    ),
    row!(
        "C-34",
        "§3.4.1",
        "SHOULD",
        Should,
        "A server-generated contextId is treated as opaque.",
        Rules(&["DLG-INPUT-01", "DLG-STATE-06"])
    ),
    row!(
        "C-35",
        "§3.4.1",
        "SHOULD (shared)",
        Should,
        "Tasks and messages with the same contextId are treated as one conversation.",
        Rules(&["DLG-STATE-06"])
    ),
    row!(
        "C-36",
        "§3.4.2",
        "MUST",
        Must,
        "A taskId in a client Message names an existing task (no client-chosen task ids).",
        Rules(&["DLG-CTX-02"])
    ),
    row!(
        "C-37",
        "§3.4.3",
        "MAY",
        May,
        "contextId may be included in follow-up messages.",
        Rules(&["DLG-INPUT-01"])
    ),
    row!(
        "C-38",
        "§3.4.3",
        "MAY",
        May,
        "A task may be continued with taskId alone, with or without contextId.",
        Rules(&["DLG-INPUT-01"])
    ),
    row!(
        "C-39",
        "§3.4.3",
        "MAY",
        May,
        "contextId may be sent without taskId to start a new task in that context.",
        Rules(&["DLG-STATE-06"])
    ),
    row!(
        "C-40",
        "§3.4.3",
        "SHOULD",
        Should,
        "referenceTaskIds is used to reference related tasks.",
        Rules(&["DLG-STATE-06"])
    ),
    row!(
        "C-41",
        "§3.7",
        "MUST NOT",
        Must,
        "Messages are not treated as reliable delivery of critical information (they can be missed on reconnect).",
        Rules(&["DLG-OBS-02", "DLG-REC-03"])
    ),
    row!(
        "C-42",
        "§3.7",
        "MUST NOT",
        Must,
        "Agents are not relied on to persist Messages in Task history unless negotiated.",
        Rules(&["DLG-CTX-03"])
    ),
    row!(
        "C-43",
        "§4.3.3, §13.2",
        "MUST",
        Must,
        "The webhook answers 2xx to acknowledge receipt.",
        Rules(&["DLG-PUSH-01"])
    ),
    row!(
        "C-44",
        "§4.3.3, §13.2",
        "SHOULD",
        Should,
        "Push notifications are processed idempotently (duplicates happen).",
        Rules(&["DLG-OBS-04"])
    ),
    row!(
        "C-45",
        "§4.3.3, §13.2",
        "MUST (§4.3.3); SHOULD (§13.2)",
        Must,
        "A push payload's task id is checked to be a task the client created.",
        Rules(&["DLG-PUSH-02"])
    ),
    row!(
        "C-46",
        "§13.2, §4.3.3",
        "MUST (§13.2); SHOULD (§4.3.3)",
        Must,
        "Webhook authenticity is validated with the configured credentials.",
        Rules(&["DLG-OBS-04"])
    ),
    row!(
        "C-47",
        "§13.2",
        "SHOULD",
        Should,
        "The webhook is rate-limited against flooding.",
        NotAutomatable {
            why: "the rate-limit threshold is the deployment's choice: no finite flood tells a limiter with a higher threshold from none"
        }
    ),
    row!(
        "C-48",
        "§13.2",
        "SHOULD",
        Should,
        "Webhook URLs use HTTPS.",
        HandedOn {
            to: FOLLOW_UP,
            why: WEBHOOK_TLS
        }
    ),
    row!(
        "C-49",
        "§13.2",
        "SHOULD",
        Should,
        "Each push config has a unique, single-purpose token.",
        Rules(&["DLG-PUSH-03"])
    ),
    row!(
        "C-50",
        "§13.2",
        "SHOULD",
        Should,
        "Push tokens are treated as secrets and rotated periodically.",
        Rules(&["DLG-SECRET-01"]),
        Some(
            "the secret part only: rotation is policy over time (how often is the deployment's choice), not automatable in one run"
        )
    ),
    row!(
        "C-51",
        "§7.1, §13.4",
        "MUST (shared)",
        Must,
        "Encrypted transport (HTTPS/TLS) in production.",
        Rules(&["DLG-TLS-02"]),
        Some(
            "the client's share, judged SHOULD (DLG-TLS-02): an agent whose card came over HTTPS is not called at plain http:// interfaces; `run --tls` runs every case with every agent over TLS"
        )
    ),
    row!(
        "C-52",
        "§7.1, §13.4",
        "SHOULD (shared)",
        Should,
        "Modern TLS (1.3 or later); deprecated SSL/TLS versions disabled.",
        Rules(&["DLG-TLS-03"]),
        Some(
            "TLS 1.3 negotiated when offered; that SSL 3.0, TLS 1.0 and 1.1 are disabled is not probed (the mock agents' rustls cannot offer them)"
        )
    ),
    row!(
        "C-53",
        "§7.2",
        "SHOULD",
        Should,
        "The server's TLS certificate is verified against trusted CAs.",
        Rules(&["DLG-TLS-01"])
    ),
    row!(
        "C-54",
        "§13.4",
        "MUST (shared)",
        Must,
        "Credentials are treated as secrets.",
        Rules(&["DLG-AUTH-01", "DLG-AUTH-02", "DLG-SECRET-01"])
    ),
    row!(
        "C-55",
        "§13.4",
        "SHOULD (shared)",
        Should,
        "Credentials are sent only over encrypted connections, and rotated.",
        HandedOn {
            to: FOLLOW_UP,
            why: CREDENTIALS_ENCRYPTED
        }
    ),
    row!(
        "C-56",
        "§13.4",
        "MUST NOT (shared)",
        Must,
        "Logs do not contain credentials or personal data unless protected.",
        Rules(&["DLG-SECRET-01"])
    ),
    row!(
        "C-57",
        "§7.6.2",
        "SHOULD",
        Should,
        "AUTH_REQUIRED passed up the client's own chain follows the agent duties (an explanatory status message).",
        Rules(&["DLG-AUTH-04"])
    ),
    row!(
        "C-58",
        "§7.6.2",
        "SHOULD",
        Should,
        "After AUTH_REQUIRED with no open stream, the client subscribes, registers a webhook or polls, so an out-of-band resume is not missed.",
        Rules(&["DLG-OBS-01", "DLG-OBS-02"])
    ),
    row!(
        "C-59",
        "§7.6.3",
        "SHOULD (shared)",
        Should,
        "In-band credentials are bound to the agent that requested them.",
        Rules(&["DLG-AUTH-02"])
    ),
    row!(
        "C-60",
        "§7.6.3",
        "SHOULD (shared)",
        Should,
        "Sensitive in-band credentials are readable only by the requesting agent (encrypted).",
        NotAutomatable {
            why: "A2A 1.0 names no scheme, key exchange or wire shape for encrypting an in-band credential to one agent, so no traffic can show whether a credential was readable by others"
        }
    ),
    row!(
        "C-61",
        "§7.6.4",
        "MUST NOT (shared)",
        Must,
        "A credential or decision from AUTH_REQUIRED is not assumed to authorise later messages on the task.",
        Rules(&["DLG-AUTH-03"])
    ),
    row!(
        "C-62",
        "§14.1.1",
        "MUST",
        Must,
        "Received content is validated against the A2A schema before processing.",
        Rules(&["DLG-ART-09"])
    ),
    row!(
        "C-63",
        "§14.1.1",
        "MUST",
        Must,
        "User- or agent-provided content is sanitized against injection.",
        Rules(&["DLG-UNTRUSTED-01", "DLG-UNTRUSTED-02"])
    ),
    row!(
        "C-64",
        "§14.1.1",
        "MUST",
        Must,
        "File references (url parts) are validated to prevent SSRF.",
        Rules(&["DLG-URL-01"])
    ),
    row!(
        "C-65",
        "App. A.2",
        "SHOULD",
        Should,
        "The new (1.0) names are used at once.",
        Rules(&["DLG-WIRE-01"])
    ),
    row!(
        "C-66",
        "App. A.2",
        "SHOULD",
        Should,
        "Legacy forms are decoded compatibly (dual handling).",
        Rules(&["DLG-STATE-02", "DLG-ART-04", "DLG-STATE-04"])
    ),
    row!(
        "C-67",
        "App. A.2",
        "SHOULD",
        Should,
        "A warning is logged when legacy-named objects arrive.",
        NotAutomatable {
            why: "where and in what words a client logs is its own choice: the driver contract's stderr is free text"
        }
    ),
    row!(
        "C-68",
        "proto AgentExtension.required",
        "must (lower case, proto)",
        Must,
        "Extensions the card marks required are understood and complied with (declared, or the agent is not used).",
        Rules(&["DLG-EXT-01"])
    ),
];
