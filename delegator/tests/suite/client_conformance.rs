//! The delegator as an A2A 1.0 client, over every binding: tenant and URL of the selected
//! interface, extensions, the version, agent-card caching, the extended card and agent
//! credentials, contextId and taskId, agents without history, push notifications, auth rounds,
//! untrusted names, REQUIRED fields, timestamps, HTTP+JSON encoding and out-of-band resume.
//! Every situation is made by the mock agents; tests wait on events and journals, never on
//! sleeps.

use crate::support;

use a2a_delegator::EscalationKind;
use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::store::DelegationState;
use a2a_mock_agents::{
    Event, Fault, IdStyle, MockAgent, MockAgentBuilder, Network, PartSpec, ScriptStep,
    SecurityScope, Step, TimestampStyle,
};
use a2a_protocol::{Binding, ErrorCode, Method, TaskState};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{EngineRun, agent, card, chunk, network, requests, scripted};

const SELF_URL: &str = "http://127.0.0.1:1/delegator";
const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::Rest, Binding::Grpc];
const OWN: &str = "Bearer own-secret-delegator-token";

fn opts() -> Options {
    support::fast_options()
}

/// An engine for these agents of `net`, configured further by `f`.
async fn start(
    net: &Network,
    agents: &[&str],
    f: impl FnOnce(EngineConfig) -> EngineConfig,
) -> EngineRun {
    let cards: Vec<String> = agents.iter().map(|a| card(net, a)).collect();
    EngineRun::start(|dir| {
        f(EngineConfig::new(dir, SELF_URL)
            .agents(cards)
            .own_credential(Some(OWN.into()))
            .options(opts()))
    })
    .await
}

/// One HTTP request an agent received: binding, method (`None` for a card or a blob), path with
/// query, params, headers.
#[derive(Debug, Clone)]
struct Seen {
    seq: u64,
    req: u64,
    binding: Binding,
    method: Option<String>,
    path: String,
    http_method: String,
    params: Value,
    headers: BTreeMap<String, String>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// Every HTTP request `agent` received, in order.
fn seen(net: &Network, agent: &str) -> Vec<Seen> {
    net.journal()
        .entries()
        .into_iter()
        .filter(|e| e.agent == agent)
        .filter_map(|e| match e.event {
            Event::Request {
                req,
                binding,
                http_method,
                path,
                method,
                params,
                headers,
                ..
            } => Some(Seen {
                seq: e.seq,
                req,
                binding,
                method,
                path,
                http_method,
                params: *params,
                headers: *headers,
            }),
            _ => None,
        })
        .collect()
}

/// The A2A requests (not card or blob fetches) `agent` received.
fn a2a(net: &Network, agent: &str) -> Vec<Seen> {
    seen(net, agent)
        .into_iter()
        .filter(|s| s.method.is_some())
        .collect()
}

/// The card fetches `agent` received.
fn card_gets(net: &Network, agent: &str) -> Vec<Seen> {
    seen(net, agent)
        .into_iter()
        .filter(|s| s.method.is_none() && s.path.starts_with("/.well-known/agent-card.json"))
        .collect()
}

/// The HTTP status of the response to request `req`.
fn status_of(net: &Network, req: u64) -> Option<u16> {
    net.journal()
        .entries()
        .into_iter()
        .find_map(|e| match e.event {
            Event::Response { req: r, status, .. } if r == req => Some(status),
            _ => None,
        })
}

/// The tenant request `s` carries on its binding: JSON-RPC and gRPC `params.tenant`, HTTP+JSON
/// the `/{tenant}` path prefix after the interface's `/rest`.
fn tenant_of(s: &Seen) -> Option<String> {
    match s.binding {
        Binding::Rest => {
            let rest = s.path.strip_prefix("/rest/")?;
            let first = rest.split(['/', '?']).next()?;
            let route = [
                "message:send",
                "message:stream",
                "tasks",
                "extendedAgentCard",
            ];
            (!route.contains(&first)).then(|| first.to_string())
        }
        Binding::JsonRpc | Binding::Grpc => s
            .params
            .get("tenant")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

/// The interface path a request of `binding` goes to at a mock agent.
fn on_interface(s: &Seen) -> bool {
    match s.binding {
        Binding::JsonRpc => s.path == "/a2a",
        Binding::Rest => s.path.starts_with("/rest/"),
        Binding::Grpc => s.path.starts_with("/lf.a2a.v1.A2AService/"),
    }
}

fn text_art(id: &str, text: &str) -> ScriptStep {
    chunk(id, text, false, true)
}

fn completed() -> ScriptStep {
    Step::state(TaskState::Completed).into()
}

/// Delegation `id` of skill `work` accepting text.
fn req(id: &str) -> a2a_delegator::DelegationRequest {
    support::request(id)
}

// ------------------------------------------------------------------------------ tenant, URL

mod tenant_and_url {
    use super::*;

    #[tokio::test]
    async fn the_interface_tenant_goes_into_every_request_exactly_and_none_without_one() {
        for b in BINDINGS {
            for streaming in [false, true] {
                let net = network(vec![
                    agent("t")
                        .bindings([b])
                        .streaming(streaming)
                        .tenant("acme")
                        .card_protocol_version("1.0.3")
                        .mount(
                            MockAgent::when()
                                .step(Step::state(TaskState::Working))
                                .step(text_art("a1", "tenanted"))
                                .step(completed()),
                        )
                        .build(),
                    agent("plain")
                        .skill("other")
                        .bindings([b])
                        .streaming(streaming)
                        .mount(
                            MockAgent::when()
                                .step(text_art("a1", "x"))
                                .step(completed()),
                        )
                        .build(),
                ])
                .await;
                let mut h = start(&net, &["t", "plain"], |c| c).await;
                let o = h.run(req(&format!("t-{b}-{streaming}"))).await;
                assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
                let mut other = req(&format!("p-{b}-{streaming}"));
                other.capability = "other".into();
                assert_eq!(h.run(other).await.state, DelegationState::Completed);
                let to_t = a2a(&net, "t");
                // Polling: the send and GetTask; streaming: the stream.
                assert!(to_t.len() >= if streaming { 1 } else { 2 }, "{b}: {to_t:?}");
                for s in &to_t {
                    assert_eq!(s.binding, b);
                    assert!(on_interface(s), "{b}: the interface's URL: {}", s.path);
                    assert_eq!(tenant_of(s).as_deref(), Some("acme"), "{b}: {s:?}");
                    // A card saying 1.0.3 is version 1.0, sent as Major.Minor.
                    assert_eq!(s.header("a2a-version"), Some("1.0"), "{b}");
                }
                for s in a2a(&net, "plain") {
                    assert!(on_interface(&s), "{b}: {}", s.path);
                    assert_eq!(tenant_of(&s), None, "{b}: no tenant: {s:?}");
                    assert!(s.params.get("tenant").is_none(), "{b}: {}", s.params);
                    assert_eq!(s.header("a2a-version"), Some("1.0"));
                }
                net.shutdown().await;
            }
        }
    }

    #[tokio::test]
    async fn a_fallback_interface_carries_its_own_tenant_and_url() {
        // The card lists a gRPC interface nothing serves (tenant "dead") before the mock's REST
        // interface (tenant "acme"): the call falls back to REST with REST's tenant.
        let net = scripted(
            agent("a").bindings([Binding::Rest]).tenant("acme"),
            vec![text_art("a1", "via the fallback"), completed()],
        )
        .await;
        let rest_url = net.rest_url("a").unwrap();
        let dead = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let card = serde_json::json!({
            "name": "stub", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": dead.to_string(), "protocolBinding": "GRPC", "protocolVersion": "1.0",
                 "tenant": "dead"},
                {"url": rest_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0",
                 "tenant": "acme"}
            ],
            "capabilities": {"streaming": false, "pushNotifications": false},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "work", "name": "n", "description": "d", "tags": ["x"]}]
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let router = axum::Router::new().route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let c = card.clone();
                async move { axum::Json(c) }
            }),
        );
        tokio::spawn(async move {
            let _ = axum::serve(l, router).await;
        });
        let mut h = EngineRun::start(|dir| {
            EngineConfig::new(dir, SELF_URL)
                .agents(vec![format!("http://{addr}/.well-known/agent-card.json")])
                .options(opts())
        })
        .await;
        let o = h.run(req("fb")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        let got = a2a(&net, "a");
        assert!(!got.is_empty());
        for s in got {
            assert_eq!(s.binding, Binding::Rest);
            assert_eq!(tenant_of(&s).as_deref(), Some("acme"), "{s:?}");
        }
    }
}

// ------------------------------------------------------------------------------ extensions

mod extensions {
    use super::*;

    const TRACE: &str = "https://example.com/ext/trace/v1";
    const SIGN: &str = "https://example.com/ext/sign/v1";
    const OPTIONAL: &str = "https://example.com/ext/optional/v1";
    const UNKNOWN: &str = "https://example.com/ext/unknown/v1";

    #[tokio::test]
    async fn required_extensions_it_supports_go_in_one_header_on_every_request() {
        for b in BINDINGS {
            for streaming in [false, true] {
                let net = scripted(
                    agent("x")
                        .bindings([b])
                        .streaming(streaming)
                        .extension(TRACE, "trace ids", true)
                        .extension(OPTIONAL, "optional", false)
                        .extension(SIGN, "signatures", true),
                    vec![
                        Step::state(TaskState::Working).into(),
                        text_art("a1", "extended"),
                        completed(),
                    ],
                )
                .await;
                let mut h = start(&net, &["x"], |c| {
                    c.extensions(vec![SIGN.into(), OPTIONAL.into(), TRACE.into()])
                })
                .await;
                let o = h.run(req(&format!("e-{b}-{streaming}"))).await;
                assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
                let got = a2a(&net, "x");
                assert!(!got.is_empty());
                for s in got {
                    // One line, comma-separated; the optional extension is not activated.
                    let line = s.header("a2a-extensions").unwrap_or_default();
                    assert!(!line.contains('\n'), "{b}: one header line: {line:?}");
                    let uris: Vec<&str> = line.split(',').map(str::trim).collect();
                    assert_eq!(uris, [TRACE, SIGN], "{b}: {line:?}");
                }
                net.shutdown().await;
            }
        }
    }

    #[tokio::test]
    async fn an_agent_requiring_an_unsupported_extension_is_not_used() {
        for b in BINDINGS {
            let net = network(vec![
                agent("picky")
                    .bindings([b])
                    .extension(UNKNOWN, "not supported here", true)
                    .mount(MockAgent::when().step(completed()))
                    .build(),
                agent("plain")
                    .bindings([b])
                    .mount(
                        MockAgent::when()
                            .step(text_art("a1", "x"))
                            .step(completed()),
                    )
                    .build(),
            ])
            .await;
            let mut h = start(&net, &["picky", "plain"], |c| {
                c.extensions(vec![TRACE.into()])
            })
            .await;
            let o = h.run(req(&format!("r-{b}"))).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert!(a2a(&net, "picky").is_empty(), "{b}: picky is never called");
            assert!(!a2a(&net, "plain").is_empty());
            // Only the picky agent can take it: refused, the reason names the extension.
            let mut only = req(&format!("o-{b}"));
            only.agent = Some(card(&net, "picky"));
            let o = h.run(only).await;
            assert_eq!(o.state, DelegationState::Refused, "{b}: {o:?}");
            assert!(
                o.reason.as_deref().unwrap_or_default().contains(UNKNOWN),
                "{o:?}"
            );
            assert!(a2a(&net, "picky").is_empty());
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn a_32008_answer_is_recorded_and_not_resent() {
        for b in BINDINGS {
            let net = scripted(
                agent("x").bindings([b]),
                vec![Step::error(ErrorCode::ExtensionSupportRequired)],
            )
            .await;
            let mut h = start(&net, &["x"], |c| c).await;
            let o = h.run(req(&format!("n-{b}"))).await;
            assert_eq!(o.state, DelegationState::SendFailed, "{b}: {o:?}");
            assert_eq!(
                requests(&net, "x", "SendMessage").len(),
                1,
                "{b}: not resent"
            );
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ card caching

mod card_cache {
    use super::*;

    fn worker(b: Binding) -> MockAgentBuilder {
        agent("c").bindings([b]).mount(
            MockAgent::when()
                .step(text_art("a1", "x"))
                .step(completed()),
        )
    }

    #[tokio::test]
    async fn a_fresh_card_is_not_fetched_again() {
        // max-age 60 s; and no caching headers at all (the default duration, five minutes).
        for headers in [true, false] {
            let net = network(vec![
                worker(Binding::JsonRpc).card_cache_headers(headers).build(),
            ])
            .await;
            let mut h = start(&net, &["c"], |c| c).await;
            for i in 0..3 {
                let o = h.run(req(&format!("f{i}"))).await;
                assert_eq!(o.state, DelegationState::Completed);
            }
            assert_eq!(
                card_gets(&net, "c").len(),
                1,
                "headers {headers}: one fetch"
            );
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn a_stale_card_is_revalidated_before_the_agent_is_used_again() {
        for b in BINDINGS {
            // max-age 0: stale at once, so every new delegation revalidates it first.
            let net = network(vec![worker(b).card_max_age(Duration::ZERO).build()]).await;
            let mut h = start(&net, &["c"], |c| c).await;
            for i in 0..2 {
                let o = h.run(req(&format!("s{i}-{b}"))).await;
                assert_eq!(o.state, DelegationState::Completed);
            }
            let gets = card_gets(&net, "c");
            assert_eq!(
                gets.len(),
                3,
                "{b}: init, then one revalidation per delegation"
            );
            for g in &gets[1..] {
                assert!(
                    g.header("if-none-match").is_some() || g.header("if-modified-since").is_some(),
                    "{b}: conditional: {g:?}"
                );
                assert_eq!(status_of(&net, g.req), Some(304), "{b}");
            }
            // Each revalidation came before that delegation's first send.
            let sends: Vec<u64> = a2a(&net, "c")
                .iter()
                .filter(|s| s.method.as_deref() == Some(Method::SendMessage.as_str()))
                .map(|s| s.seq)
                .collect();
            assert_eq!(sends.len(), 2);
            assert!(gets[1].seq < sends[0] && gets[2].seq > sends[0] && gets[2].seq < sends[1]);
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn a_changed_card_is_used_for_new_work_and_work_in_flight_keeps_its_card() {
        for b in BINDINGS {
            // The tenant changes 300 ms after the start; the first delegation's task runs past
            // that (the agent waits 800 ms), the second starts after it.
            let net = network(vec![
                agent("c")
                    .bindings([b])
                    .tenant("acme")
                    .card_max_age(Duration::ZERO)
                    .card_change(Duration::from_millis(300), "acme-v2")
                    .mount(
                        MockAgent::when()
                            .text_contains("slow")
                            .step(Step::state(TaskState::Working))
                            .step(Step::wait(Duration::from_millis(800)))
                            .step(text_art("a1", "x"))
                            .step(completed()),
                    )
                    .mount(
                        MockAgent::when()
                            .step(text_art("a1", "y"))
                            .step(completed()),
                    )
                    .build(),
            ])
            .await;
            let mut h = start(&net, &["c"], |c| c).await;
            let mut first = req(&format!("old-{b}"));
            first.text = "slow work".into();
            assert_eq!(h.run(first).await.state, DelegationState::Completed);
            let boundary = net.journal().len() as u64;
            let o = h.run(req(&format!("new-{b}"))).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            let (before, after): (Vec<Seen>, Vec<Seen>) =
                a2a(&net, "c").into_iter().partition(|s| s.seq < boundary);
            assert!(
                before
                    .iter()
                    .all(|s| tenant_of(s).as_deref() == Some("acme"))
            );
            assert!(!after.is_empty());
            assert!(
                after
                    .iter()
                    .all(|s| tenant_of(s).as_deref() == Some("acme-v2")),
                "{b}: the changed card's tenant: {after:?}"
            );
            let last_get = card_gets(&net, "c").pop().unwrap();
            assert_eq!(
                status_of(&net, last_get.req),
                Some(200),
                "{b}: a changed card"
            );
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ extended card

mod extended_card {
    use super::*;

    const AGENT_CRED: &str = "Bearer agent-cred-7-abcdef";

    fn premium(b: Binding, scope: SecurityScope) -> MockAgentBuilder {
        agent("vip")
            .bindings([b])
            .security(AGENT_CRED, scope)
            .extended_skill("premium")
            .extended_tenant("premium-t")
            .mount(
                MockAgent::when()
                    .step(Step::state(TaskState::Working))
                    .step(text_art("a1", "premium result"))
                    .step(completed()),
            )
    }

    fn premium_req(id: &str) -> a2a_delegator::DelegationRequest {
        let mut r = req(id);
        r.capability = "premium".into();
        r
    }

    #[tokio::test]
    async fn the_extended_card_is_fetched_with_the_agent_credential_and_used() {
        for b in BINDINGS {
            let net = network(vec![
                premium(b, SecurityScope::ExtendedCard).build(),
                agent("other")
                    .skill("other")
                    .bindings([b])
                    .mount(
                        MockAgent::when()
                            .step(text_art("a1", "x"))
                            .step(completed()),
                    )
                    .build(),
            ])
            .await;
            let vip = card(&net, "vip");
            let mut h = start(&net, &["vip", "other"], |c| {
                c.agent_credentials([(vip.clone(), AGENT_CRED.to_string())].into())
            })
            .await;
            let o = h.run(premium_req(&format!("p-{b}"))).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            let got = a2a(&net, "vip");
            let ext: Vec<&Seen> = got
                .iter()
                .filter(|s| s.method.as_deref() == Some(Method::GetExtendedAgentCard.as_str()))
                .collect();
            assert_eq!(ext.len(), 1, "{b}: fetched once");
            assert_eq!(ext[0].header("authorization"), Some(AGENT_CRED));
            assert_eq!(status_of(&net, ext[0].req), Some(200));
            // Work goes over the extended card's first interface, with its tenant.
            let sends: Vec<&Seen> = got
                .iter()
                .filter(|s| s.seq > ext[0].seq && s.method.as_deref() != ext[0].method.as_deref())
                .collect();
            assert!(!sends.is_empty());
            for s in sends {
                assert_eq!(tenant_of(s).as_deref(), Some("premium-t"), "{b}: {s:?}");
            }
            // The other agent never sees the credential; nobody sees the delegator's own.
            let mut r = req(&format!("o-{b}"));
            r.capability = "other".into();
            assert_eq!(h.run(r).await.state, DelegationState::Completed);
            for s in seen(&net, "other") {
                assert_eq!(s.header("authorization"), None, "{b}: {s:?}");
            }
            for e in net.journal().entries() {
                if let Event::Request {
                    headers, params, ..
                } = &e.event
                {
                    let all = format!("{headers:?}{params}");
                    assert!(!all.contains("own-secret-delegator-token"), "{b}");
                }
            }
            // The credential is written nowhere.
            let snap = h.engine.snapshot().await.unwrap();
            assert!(
                !serde_json::to_string(&snap)
                    .unwrap()
                    .contains("agent-cred-7")
            );
            assert!(!h.store_holds("agent-cred-7"));
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn without_the_credential_the_extended_card_is_never_asked_for() {
        for b in BINDINGS {
            let net = network(vec![premium(b, SecurityScope::ExtendedCard).build()]).await;
            let mut h = start(&net, &["vip"], |c| c).await;
            let o = h.run(premium_req(&format!("n-{b}"))).await;
            assert_eq!(o.state, DelegationState::Refused, "{b}: {o:?}");
            assert!(a2a(&net, "vip").is_empty(), "{b}: no unauthenticated call");
            // The public card's skill is served as usual, without a credential.
            let o = h.run(req(&format!("w-{b}"))).await;
            assert_eq!(o.state, DelegationState::Completed);
            for s in a2a(&net, "vip") {
                assert_eq!(s.header("authorization"), None);
            }
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn a_card_requiring_the_credential_for_everything_gets_it_on_every_request() {
        for b in BINDINGS {
            for streaming in [false, true] {
                let net = network(vec![
                    premium(b, SecurityScope::All).streaming(streaming).build(),
                ])
                .await;
                let vip = card(&net, "vip");
                let mut h = start(&net, &["vip"], |c| {
                    c.agent_credentials([(vip.clone(), AGENT_CRED.to_string())].into())
                })
                .await;
                for (i, skill) in ["work", "premium"].into_iter().enumerate() {
                    let mut r = req(&format!("a{i}-{b}-{streaming}"));
                    r.capability = skill.into();
                    let o = h.run(r).await;
                    assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
                }
                for s in a2a(&net, "vip") {
                    assert_eq!(s.header("authorization"), Some(AGENT_CRED), "{b}: {s:?}");
                    assert_eq!(status_of(&net, s.req).map(|c| c < 400), Some(true));
                }
                net.shutdown().await;
            }
        }
    }

    #[tokio::test]
    async fn a_scoped_credential_wins_over_the_agent_credential_for_its_task() {
        for b in BINDINGS {
            let net = network(vec![
                agent("vip")
                    .bindings([b])
                    .security(AGENT_CRED, SecurityScope::ExtendedCard)
                    .extended_skill("premium")
                    .mount(
                        MockAgent::when()
                            .step(Step::auth_required("Bearer scoped-task-1"))
                            .step(text_art("a1", "x"))
                            .step(completed()),
                    )
                    .build(),
            ])
            .await;
            let vip = card(&net, "vip");
            let mut h = start(&net, &["vip"], |c| {
                c.agent_credentials([(vip.clone(), AGENT_CRED.to_string())].into())
            })
            .await;
            h.engine.delegate(req(&format!("s-{b}"))).await.unwrap();
            let (id, kind, _) = h.escalation().await;
            assert_eq!(kind, EscalationKind::Auth);
            h.engine
                .credential(&id, "Bearer scoped-task-1".into())
                .unwrap();
            let o = h.done(&id).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            let sends = requests(&net, "vip", "SendMessage");
            let last = sends.last().unwrap();
            assert_eq!(last.header("authorization"), Some("Bearer scoped-task-1"));
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ ids, history

mod ids_and_history {
    use super::*;

    #[tokio::test]
    async fn new_work_carries_no_minted_context_and_continuations_only_agent_ids() {
        for b in BINDINGS {
            let net = scripted(
                agent("a").bindings([b]).keep_history(false),
                vec![
                    Step::state(TaskState::Working).into(),
                    Step::input_required("Which account?").into(),
                    text_art("a1", "paid"),
                    Step::state(TaskState::Completed)
                        .message("Paid from the account you named")
                        .into(),
                ],
            )
            .await;
            let mut h = start(&net, &["a"], |c| c).await;
            h.engine.delegate(req(&format!("c-{b}"))).await.unwrap();
            // The question comes from the status message (the agent keeps no history).
            let (id, kind, q) = h.escalation().await;
            assert_eq!(
                (kind, q.as_str()),
                (EscalationKind::Input, "Which account?")
            );
            h.engine.answer(&id, "the savings account".into()).unwrap();
            let o = h.done(&id).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert_eq!(
                o.message.as_deref(),
                Some("Paid from the account you named")
            );
            let sends = requests(&net, "a", "SendMessage");
            let first = &sends[0].params["message"];
            assert!(first.get("contextId").is_none(), "{b}: {first}");
            assert!(first.get("taskId").is_none(), "{b}: {first}");
            let (task, _) = support::tasks(&net, "a")[0].clone();
            for s in &sends[1..] {
                assert_eq!(s.params["message"]["taskId"], task.as_str(), "{b}");
            }
            assert_eq!(o.task_id.as_deref(), Some(task.as_str()));
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn streaming_with_an_agent_without_history_escalates_the_status_message() {
        for b in BINDINGS {
            let net = scripted(
                agent("a").bindings([b]).streaming(true).keep_history(false),
                vec![
                    Step::input_required("Which region?").into(),
                    text_art("a1", "done"),
                    Step::state(TaskState::Completed)
                        .message("Done in your region")
                        .into(),
                ],
            )
            .await;
            let mut h = start(&net, &["a"], |c| c).await;
            h.engine.delegate(req(&format!("h-{b}"))).await.unwrap();
            let (id, _, q) = h.escalation().await;
            assert_eq!(q, "Which region?");
            h.engine.answer(&id, "eu-west".into()).unwrap();
            let o = h.done(&id).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert_eq!(o.message.as_deref(), Some("Done in your region"));
            assert_eq!(o.artifacts[0].sha256, support::sha(b"done"));
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ push

mod push {
    use super::*;

    #[tokio::test]
    async fn genuine_pushes_are_acknowledged_foreign_ones_change_nothing_tokens_are_unique() {
        for b in BINDINGS {
            let net = network(vec![
                agent("p")
                    .bindings([b])
                    .push_notifications(true)
                    .push_duplicates(1)
                    .queue_fault(Method::SendMessage, support::busy(), 1)
                    .mount(
                        MockAgent::when()
                            .step(Step::state(TaskState::Working))
                            .step(Step::push_foreign(TaskState::Completed))
                            .step(Step::gate("after-foreign"))
                            .step(text_art("a1", "the real result"))
                            .step(completed())
                            // A late event once the delegation is over: its push is still
                            // genuine and acknowledged.
                            .step(Step::gate("after-done"))
                            .step(text_art("late", "after the end")),
                    )
                    .build(),
            ])
            .await;
            let mut h = start(&net, &["p"], |c| {
                c.webhook_base_url(Some("http://127.0.0.1:0".into()))
            })
            .await;
            h.engine.delegate(req(&format!("w-{b}"))).await.unwrap();
            // Wait until the foreign push was delivered, then let the task finish.
            let foreign = |es: &[a2a_mock_agents::Entry]| {
                let ours: Vec<String> = es
                    .iter()
                    .filter_map(|e| match &e.event {
                        Event::TaskCreated { task_id, .. } => Some(task_id.clone()),
                        _ => None,
                    })
                    .collect();
                es.iter()
                    .filter(|e| {
                        matches!(&e.event, Event::Push { task_id, status: Some(_), .. }
                            if !ours.contains(task_id))
                    })
                    .count()
                    >= 2
            };
            support::wait_journal(&net, "the foreign pushes", 10, foreign).await;
            let state_now = h.engine.snapshot().await.unwrap();
            assert_ne!(
                state_now[0].state,
                DelegationState::Completed,
                "{b}: a foreign push completes nothing"
            );
            net.open_gate("after-foreign");
            let o = h.done(&format!("w-{b}")).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert_eq!(o.artifacts[0].sha256, support::sha(b"the real result"));
            let task = o.task_id.clone().unwrap();
            net.open_gate("after-done");
            let late = |es: &[a2a_mock_agents::Entry]| {
                es.iter()
                    .filter(|e| matches!(&e.event, Event::Push { task_id, status: Some(_), .. } if *task_id == task))
                    .count()
                    >= 2 * 4
            };
            support::wait_journal(&net, "the late pushes", 10, late).await;
            let mut genuine = 0;
            for e in net.journal().entries() {
                if let Event::Push {
                    task_id, status, ..
                } = e.event
                    && task_id == task
                {
                    genuine += 1;
                    assert!(
                        status.is_some_and(|s| (200..300).contains(&s)),
                        "{b}: a genuine push (duplicates too) gets 2xx: {status:?}"
                    );
                }
            }
            assert!(genuine >= 2, "{b}: pushes and their duplicates: {genuine}");
            // Two sends (one 503), each push config with its own token.
            let sends = requests(&net, "p", "SendMessage");
            assert_eq!(sends.len(), 2);
            let tokens: Vec<&str> = sends
                .iter()
                .filter_map(|s| {
                    s.params["configuration"]["taskPushNotificationConfig"]["token"].as_str()
                })
                .collect();
            assert_eq!(tokens.len(), 2, "{b}");
            assert_ne!(tokens[0], tokens[1], "{b}: one token per config");
            let snap = h.engine.snapshot().await.unwrap();
            assert_eq!(snap[0].push_token_sha256.len(), 2);
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn no_push_config_for_an_agent_that_does_not_declare_push() {
        let net = scripted(agent("p").push_notifications(false), vec![completed()]).await;
        let mut h = start(&net, &["p"], |c| {
            c.webhook_base_url(Some("http://127.0.0.1:0".into()))
        })
        .await;
        assert_eq!(h.run(req("np")).await.state, DelegationState::Completed);
        for s in a2a(&net, "p") {
            assert!(
                s.params["configuration"]
                    .get("taskPushNotificationConfig")
                    .is_none()
            );
            assert_ne!(
                s.method.as_deref(),
                Some(Method::CreateTaskPushNotificationConfig.as_str())
            );
        }
    }
}

// ------------------------------------------------------------------------------ auth rounds

mod auth {
    use super::*;

    #[tokio::test]
    async fn every_auth_round_is_escalated_anew_with_the_agent_message() {
        for b in BINDINGS {
            let round = |cred: &str, msg: &str| ScriptStep::AuthRequired {
                credential: cred.into(),
                message: Some(msg.into()),
                max_wrong: 3,
                timeout_ms: 30_000,
                resume_after_ms: None,
            };
            let net = scripted(
                agent("p").bindings([b]),
                vec![
                    round("Bearer read-1", "Grant read access"),
                    round("Bearer write-2", "Now grant write access"),
                    text_art("a1", "x"),
                    completed(),
                ],
            )
            .await;
            let mut h = start(&net, &["p"], |c| c).await;
            let id = format!("a-{b}");
            h.engine.delegate(req(&id)).await.unwrap();
            let (_, kind, q) = h.escalation().await;
            assert_eq!(
                (kind, q.as_str()),
                (EscalationKind::Auth, "Grant read access")
            );
            h.engine.credential(&id, "Bearer read-1".into()).unwrap();
            let (_, kind, q) = h.escalation().await;
            assert_eq!(
                (kind, q.as_str()),
                (EscalationKind::Auth, "Now grant write access")
            );
            let second_round = net.journal().len() as u64;
            // While the second escalation waits, the task is still read (out-of-band resume):
            // let that happen before answering, so those reads are judged too.
            support::wait_calls(&net, "p", 10, |rs| {
                rs.iter()
                    .any(|r| r.seq > second_round && r.method == "GetTask")
            })
            .await;
            h.engine.credential(&id, "Bearer write-2".into()).unwrap();
            let o = h.done(&id).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            // The first round's credential is never sent for the second round.
            for s in a2a(&net, "p").iter().filter(|s| s.seq > second_round) {
                assert_ne!(
                    s.header("authorization"),
                    Some("Bearer read-1"),
                    "{b}: {s:?}"
                );
            }
            let continued: Vec<String> = net
                .journal()
                .entries()
                .into_iter()
                .filter_map(|e| match e.event {
                    Event::Continued { outcome, .. } => Some(outcome),
                    _ => None,
                })
                .collect();
            assert_eq!(continued, ["accepted", "accepted"], "{b}");
            net.shutdown().await;
        }
    }

    #[tokio::test]
    async fn an_agent_resuming_out_of_band_is_seen_without_an_answer() {
        for b in BINDINGS {
            for streaming in [false, true] {
                let net = scripted(
                    agent("p").bindings([b]).streaming(streaming),
                    vec![
                        Step::state(TaskState::Working).into(),
                        Step::auth_required_resuming(
                            "Bearer never-given",
                            Duration::from_millis(300),
                        ),
                        text_art("a1", "resumed"),
                        completed(),
                    ],
                )
                .await;
                let mut h = start(&net, &["p"], |c| c).await;
                let id = format!("o-{b}-{streaming}");
                h.engine.delegate(req(&id)).await.unwrap();
                let (_, kind, _) = h.escalation().await;
                assert_eq!(kind, EscalationKind::Auth);
                // No credential is ever given: the agent resumes on its own.
                let o = h.done(&id).await;
                assert_eq!(
                    o.state,
                    DelegationState::Completed,
                    "{b} {streaming}: {o:?}"
                );
                assert_eq!(o.artifacts[0].sha256, support::sha(b"resumed"));
                net.shutdown().await;
            }
        }
    }
}

// ------------------------------------------------------------------------------ names

mod untrusted_names {
    use super::*;

    #[tokio::test]
    async fn agent_chosen_names_never_decide_where_files_go() {
        let long = "n".repeat(5000);
        let hostile = [
            "../../escaped-by-id",
            "/tmp/absolute-escape",
            "nul\u{0}byte",
            long.as_str(),
            "..",
            "a/../../b",
        ];
        for b in BINDINGS {
            let mut steps: Vec<ScriptStep> = Vec::new();
            for (i, id) in hostile.iter().enumerate() {
                let part = PartSpec {
                    filename: Some(format!("../../escaped-file-{i}")),
                    ..PartSpec::text(&format!("content {i}"))
                };
                steps.push(
                    Step::artifact()
                        .id(id)
                        .name(&format!("../../../escaped-name-{i}"))
                        .part(part)
                        .into(),
                );
            }
            steps.push(completed());
            let net = scripted(agent("a").bindings([b]), steps).await;
            let mut h = start(&net, &["a"], |c| c).await;
            let mut r = req(&format!("n-{b}"));
            r.artifact_spec.max_size_bytes = 100_000;
            let o = h.run(r).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert_eq!(o.artifacts.len(), hostile.len());
            let root = h.store_dir().canonicalize().unwrap();
            for a in &o.artifacts {
                let p = std::path::Path::new(&a.path).canonicalize().unwrap();
                assert!(
                    p.starts_with(&root),
                    "{b}: {} outside {}",
                    p.display(),
                    root.display()
                );
                assert!(p.file_name().unwrap().len() < 100, "{b}: a bounded name");
            }
            // Nothing named by the agent appeared next to the store.
            let parent = root.parent().unwrap();
            for e in std::fs::read_dir(parent).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().to_string();
                assert!(!name.starts_with("escaped"), "{b}: {name}");
            }
            assert!(!std::path::Path::new("/tmp/absolute-escape").exists());
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ REQUIRED fields

mod required_fields {
    use super::*;

    #[tokio::test]
    async fn events_lacking_required_fields_are_never_taken_as_results() {
        // Over gRPC an absent state is UNSPECIFIED (observed as such): not omitted there.
        let cases: [(&str, bool); 5] = [
            ("artifact.artifactId", true),
            ("artifact.parts", true),
            ("taskId", true),
            ("status.state", false),
            ("id", true),
        ];
        for b in BINDINGS {
            for (omit, on_grpc) in cases {
                if b == Binding::Grpc && !on_grpc {
                    continue;
                }
                let malformed = if omit == "taskId" {
                    Step::malformed_event_of(a2a_mock_agents::EventKind::ArtifactUpdate, omit)
                } else {
                    Step::malformed_event(omit)
                };
                let net = scripted(
                    agent("s").bindings([b]).streaming(true),
                    vec![
                        Step::state(TaskState::Working).into(),
                        malformed,
                        Step::gate("after-malformed"),
                        text_art("real", "the real result"),
                        completed(),
                    ],
                )
                .await;
                let mut h = start(&net, &["s"], |c| c).await;
                let id = format!("m-{b}-{omit}");
                h.engine.delegate(req(&id)).await.unwrap();
                // The rejected event leads to a fresh GetTask.
                support::wait_count(&net, "s", "GetTask", 1).await;
                net.open_gate("after-malformed");
                let o = h.done(&id).await;
                assert_eq!(o.state, DelegationState::Completed, "{b} {omit}: {o:?}");
                assert_eq!(o.artifacts.len(), 1, "{b} {omit}: {o:?}");
                assert_eq!(o.artifacts[0].artifact_id, "real");
                let reason = o.reason.clone().unwrap_or_default();
                assert!(reason.contains("lacks REQUIRED"), "{b} {omit}: {reason}");
                net.shutdown().await;
            }
        }
    }

    #[tokio::test]
    async fn answers_lacking_required_fields_are_read_again_or_fail_visibly() {
        for b in BINDINGS {
            // A GetTask answer without status: read again.
            let net = network(vec![
                agent("g")
                    .bindings([b])
                    .queue_fault(Method::GetTask, Fault::omit_fields(["/result/status"]), 1)
                    .mount(
                        MockAgent::when()
                            .step(Step::state(TaskState::Working))
                            .step(text_art("a1", "ok"))
                            .step(completed()),
                    )
                    .build(),
                agent("s")
                    .skill("send")
                    .bindings([b])
                    .mount(
                        MockAgent::when()
                            .fault(Fault::omit_fields(["/result/task/id"]))
                            .step(completed()),
                    )
                    .build(),
            ])
            .await;
            let mut h = start(&net, &["g", "s"], |c| c).await;
            let o = h.run(req(&format!("g-{b}"))).await;
            assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
            assert!(
                o.reason
                    .unwrap_or_default()
                    .contains("lacks REQUIRED status")
            );
            assert!(requests(&net, "g", "GetTask").len() >= 2);
            // A send answer whose task has no id: nothing can be followed; a visible failure.
            let mut r = req(&format!("s-{b}"));
            r.capability = "send".into();
            let o = h.run(r).await;
            assert_eq!(o.state, DelegationState::Failed, "{b}: {o:?}");
            assert!(o.reason.unwrap_or_default().contains("lacks REQUIRED id"));
            net.shutdown().await;
        }
    }
}

// ------------------------------------------------------------------------------ timestamps

mod timestamps {
    use super::*;

    #[tokio::test]
    async fn every_rfc3339_form_parses() {
        for b in [Binding::JsonRpc, Binding::Rest] {
            for streaming in [false, true] {
                let net = scripted(
                    agent("t")
                        .bindings([b])
                        .streaming(streaming)
                        .timestamp_style(TimestampStyle::Rotate),
                    vec![
                        Step::state(TaskState::Submitted).into(),
                        Step::state(TaskState::Working).into(),
                        Step::state(TaskState::Working).into(),
                        Step::state(TaskState::Working).into(),
                        text_art("a1", "stamped"),
                        Step::state(TaskState::Working).into(),
                        completed(),
                    ],
                )
                .await;
                let mut h = start(&net, &["t"], |c| c).await;
                let o = h.run(req(&format!("ts-{b}-{streaming}"))).await;
                assert_eq!(o.state, DelegationState::Completed, "{b}: {o:?}");
                assert_eq!(o.reason.as_deref(), Some("the task completed"));
                net.shutdown().await;
            }
        }
    }
}

// ------------------------------------------------------------------------------ HTTP+JSON

mod http_json {
    use super::*;

    #[tokio::test]
    async fn opaque_ids_are_percent_encoded_and_bodies_typed() {
        let net = network(vec![
            agent("o")
                .bindings([Binding::Rest])
                .id_style(IdStyle::Opaque)
                .mount(
                    MockAgent::when()
                        .step(Step::state(TaskState::Working))
                        .step(Step::gate("hold"))
                        .step(text_art("a1", "opaque"))
                        .step(completed()),
                )
                .build(),
        ])
        .await;
        let mut h = start(&net, &["o"], |c| c).await;
        h.engine.delegate(req("op")).await.unwrap();
        support::wait_count(&net, "o", "GetTask", 2).await;
        net.open_gate("hold");
        let o = h.done("op").await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        let task = o.task_id.unwrap();
        assert!(
            task.contains('/') && task.contains('#') && task.contains(' '),
            "{task}"
        );
        for s in a2a(&net, "o") {
            match s.http_method.as_str() {
                "POST" => assert_eq!(
                    s.header("content-type"),
                    Some("application/a2a+json"),
                    "{s:?}"
                ),
                _ => {
                    assert_eq!(s.header("content-type"), None, "{s:?}");
                    let after = s.path.strip_prefix("/rest/tasks/").unwrap_or_default();
                    let id_part = after.split('?').next().unwrap_or_default();
                    assert!(
                        !id_part.contains(['/', ' ', '#', '+']),
                        "percent-encoded: {}",
                        s.path
                    );
                    assert_eq!(s.params["id"], task.as_str(), "{s:?}");
                }
            }
        }
        assert!(support::requests(&net, "o", "GetTask").len() >= 2);
    }
}
