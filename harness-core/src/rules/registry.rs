//! The rule registry: every rule with its ID (data, not a function name), level, requirement,
//! source and checker.

use super::art::*;
use super::auth::*;
use super::card::*;
use super::ctx::*;
use super::evidence::Evidence;
use super::ext::*;
use super::input::*;
use super::limit::*;
use super::names::agent_names_never_steer_writes;
use super::obs::*;
use super::push::*;
use super::rec::*;
use super::rejection::*;
use super::rest::*;
use super::retry::*;
use super::route::*;
use super::secret::no_secret_in_plaintext;
use super::send::*;
use super::sign::*;
use super::state::*;
use super::tls::*;
use super::url::url_parts_validated;
use super::wire::*;
/// How binding a rule is: the report vocabulary of the driver contract.
pub use a2a_driver_contract::report::Level;

/// The result of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The rule held.
    Pass,
    /// The rule was broken.
    Fail {
        /// What should have happened.
        expected: String,
        /// What happened.
        observed: String,
        /// Journal sequence numbers of the witness events.
        witnesses: Vec<u64>,
    },
    /// Nothing in this case bears on the rule.
    NotApplicable,
    /// The situation the rule is about did not arise because the delegator legitimately took
    /// another path (for example push instead of polling): reported NOT EXERCISED, never a
    /// failure.
    NotExercised {
        /// Which path the delegator took instead.
        why: String,
    },
}

impl Check {
    /// The verdict of a checker that found no violation: PASS when the situation it judges
    /// arose (`seen`), otherwise nothing bears on the rule.
    pub(super) fn held_if_seen(seen: bool) -> Check {
        if seen {
            Check::Pass
        } else {
            Check::NotApplicable
        }
    }
}

pub(super) fn fail(
    expected: impl Into<String>,
    observed: impl Into<String>,
    witnesses: Vec<u64>,
) -> Check {
    Check::Fail {
        expected: expected.into(),
        observed: observed.into(),
        witnesses,
    }
}

/// Combine a further check into a rule that already held: only its failure counts.
pub(super) fn and_then(c: Check) -> Check {
    match c {
        f @ Check::Fail { .. } => f,
        _ => Check::Pass,
    }
}

/// A rule of the registry.
pub struct Rule {
    /// Stable ID such as `DLG-SEND-02`.
    pub id: &'static str,
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// The checker; `None` means no checker exists yet (always NOT TESTED).
    pub check: Option<fn(&Evidence) -> Check>,
    /// Checked in every case, not only where a scenario lists it.
    pub always: bool,
}

macro_rules! rules {
    ($( $id:literal, $lvl:ident, $always:literal, $check:expr, $src:literal, $req:literal; )*) => {
        vec![$( Rule { id: $id, level: Level::$lvl, requirement: $req, source: $src, check: $check, always: $always } ),*]
    };
}

/// Every rule, by family (the order `rules` and the reports list them in).
pub fn registry() -> Vec<Rule> {
    rules! {
        "DLG-SEND-01", Must, false, Some(nothing_lost_across_restart), "000 Sending; Failure modes: lost task ids", "The delegation's record is durable before its first request leaves: a crash at the first request loses nothing.";
        "DLG-SEND-02", Must, true, Some(message_id_stable_across_resends), "000 Sending; 001 Retry: idempotency key", "messageId is derived from the delegation and the purpose of the message; every resend of the same intent carries the same messageId.";
        "DLG-SEND-03", Should, true, Some(non_streaming_sends_return_immediately), "000 Sending; Failure modes: blocking sends", "Non-streaming sends set returnImmediately: true.";
        "DLG-SEND-04", Must, true, Some(version_header_on_every_request), "R02; spec §3.6.1", "Every request to a 1.0 agent carries the protocol version 1.0: the A2A-Version header, or the A2A-Version query parameter spec §3.6.1 allows (gRPC: a2a-version metadata). A value with a patch number (1.0.2) is still version 1.0 here (DLG-SEND-10 judges the patch number).";
        "DLG-SEND-05", Must, true, Some(message_reply_answers_directly), "000 Sending: the response is a one-of; Failure modes: assuming a task", "A Message reply ends the delegation as answered directly; the delegator never assumes a task.";
        "DLG-SEND-06", Must, false, Some(task_ids_recorded), "000 Sending", "The task id and context id of a Task reply are recorded at once.";
        "DLG-SEND-07", Must, true, Some(x_deleg_metadata_present), "000 Budgets, deadlines and depth", "Requests to delegates carry x-deleg with deadline, budget_usd, depth and chain.";
        "DLG-SEND-08", Should, false, Some(accepted_output_modes_match_spec), "001 ArtifactSpec; R12", "acceptedOutputModes lists the media types of the request's artifact spec.";
        "DLG-SEND-09", Must, false, Some(definite_errors_not_resent), "000 Sending (SEND_FAILED)", "A definite error reply (JSON-RPC error) is recorded with its code; it is not resent unchanged.";
        "DLG-SEND-10", Should, true, Some(version_is_major_minor), "spec §3.6", "The version sent is Major.Minor only (1.0), never with a patch number (spec §3.6: clients SHOULD NOT send patch numbers).";
        "DLG-WIRE-01", Must, true, Some(requests_conform_to_v1), "R01, R05, R06, R07", "Every request to a 1.0 agent uses a 1.0 method name and params with no deviation from the 1.0 proto (no unknown or legacy fields, exact enum names, required fields present).";
        "DLG-WIRE-02", Must, true, Some(jsonrpc_envelope), "spec §9.3", "JSON-RPC requests use the JSON-RPC 2.0 envelope: jsonrpc \"2.0\", a string or number id, method, and params an object.";
        "DLG-WIRE-03", Must, false, Some(every_timestamp_form_parsed), "spec §5.6.1", "Timestamps in any valid form (RFC 3339: 0 to 9 fractional digits, Z or an offset) are parsed: the delegation reaches the outcome the agent's states justify.";
        "DLG-REST-01", Should, true, Some(rest_bodies_are_a2a_json), "spec §11.1", "HTTP+JSON requests with a body carry Content-Type: application/a2a+json.";
        "DLG-REST-02", Must, true, Some(rest_parameters_encoded), "spec §11.5", "HTTP+JSON GET and DELETE parameters travel in the path or query under their camelCase names, percent-encoded (RFC 3986), with no nested objects.";
        "DLG-EXT-01", Must, false, Some(required_extensions_honoured), "spec §4.6; proto AgentExtension.required", "Extensions a card marks required are honoured: every request to that agent lists each in A2A-Extensions (gRPC metadata) when the delegator supports it (init extensions); otherwise the agent is not used.";
        "DLG-EXT-02", Should, false, Some(service_parameters_comma_joined), "spec §9.2, §10.2, §11.2", "Several values of one service parameter go comma-separated in one header (one metadata entry), never as repeated headers.";
        "DLG-CARD-01", Must, false, Some(patch_version_card_is_v1), "spec §3.6", "A card whose protocolVersion carries a patch number (1.0.3) is version 1.0: the agent is used and spoken to in 1.0.";
        "DLG-CARD-02", Should, false, Some(fresh_card_not_refetched), "spec §8.6, §8.6.2", "A fresh agent card (RFC 9111: Cache-Control max-age, ETag, Last-Modified) is not fetched again within one process life; without caching headers any default duration is allowed (MAY).";
        "DLG-CARD-03", Should, false, Some(stale_card_revalidated), "spec §8.6.2", "Once a cached card is stale it is revalidated (If-None-Match or If-Modified-Since) before the agent is used again, and a changed card's interfaces are used from then on.";
        "DLG-CARD-04", Must, true, Some(extended_card_authenticated), "spec §3.1.11", "GetExtendedAgentCard is authenticated with a scheme the public card's securitySchemes declare (the credential the harness gave for that agent).";
        "DLG-CARD-05", Should, false, Some(extended_card_replaces_public), "spec §3.1.11, §13.3", "Once the extended card is obtained, its skills and interfaces replace the public card's for that agent.";
        "DLG-ROUTE-01", Must, true, Some(routed_to_capable_agent), "001 Introduction: route to a capable agent", "Work goes only to an agent whose card (the extended card where the delegator is entitled to it) advertises the required skill and an output mode the request accepts.";
        "DLG-ROUTE-02", Should, false, Some(streaming_when_declared_and_preferred), "001 ArtifactSpec.streaming_preferred; R09, R12", "Streaming is used when the card declares it and the request prefers it; never when the card does not declare it.";
        "DLG-ROUTE-03", Should, false, Some(v03_agents_spoken_to_in_v03), "000 A note on protocol versions", "A 0.3 agent (by its card) is spoken to in 0.3, through one adapter.";
        "DLG-ROUTE-04", Must, true, Some(only_advertised_bindings), "R56; spec §5.2, §8.3", "An agent is spoken to only over a protocol binding its card's supportedInterfaces advertises (an agent serving only gRPC is spoken to over gRPC).";
        "DLG-ROUTE-05", Must, false, Some(first_supported_interface), "R56; spec §8.3.2 (1, 2)", "The first request to an agent uses the first interface in card order whose binding AND protocol version the delegator supports (bindings: init_ok.supports binding:*, none listed: JSON-RPC; versions: every 1.x, 0.x only with a2a_0_3 in supports).";
        "DLG-ROUTE-06", Must, false, Some(failed_binding_falls_back_or_fails_visibly), "spec §5.2 (SHOULD fall back)", "When an advertised binding fails at the transport level, the delegator falls back to another advertised binding or ends the delegation visibly; it never hangs on it.";
        "DLG-ROUTE-07", Must, true, Some(interface_url_and_tenant), "spec §8.3.2 (3, 4)", "Every request goes to the URL of the interface it uses and carries that interface's tenant exactly (none when the interface has none).";
        "DLG-ROUTE-08", Should, false, Some(falls_back_to_another_binding), "spec §5.2", "When an advertised binding fails at the transport level and the card advertises another binding the delegator speaks, the delegator falls back to it.";
        "DLG-ROUTE-09", Should, true, Some(optional_capabilities_declared), "spec §3.3.4", "Optional capabilities are used only when the card declares them: push configs only with capabilities.pushNotifications, GetExtendedAgentCard only with capabilities.extendedAgentCard (streaming: DLG-ROUTE-02).";
        "DLG-CTX-01", Should, true, Some(no_client_minted_context), "spec §3.4.1 (SHOULD NOT)", "A message that starts new work carries no client-generated contextId: only one the agent gave (refinement, follow-up).";
        "DLG-CTX-02", Must, true, Some(task_ids_name_agent_tasks), "spec §3.4.2", "A message's taskId names a task that agent created; a client never invents task ids.";
        "DLG-CTX-03", Must, false, Some(nothing_depends_on_history), "spec §3.7", "Nothing depends on the agent keeping Task history: questions come from the status message and results from artifacts when the agent keeps no history.";
        "DLG-STATE-01", Must, false, Some(open_states_kept_observed), "000 Mapping every state", "SUBMITTED and WORKING keep the delegation open and observed.";
        "DLG-STATE-02", Must, false, Some(completed_committed), "000 Accepting results", "COMPLETED: artifacts are validated, then committed; the outcome is COMPLETED.";
        "DLG-STATE-03", Must, false, Some(terminal_outcome_recorded_and_final), "000 Terminal is final; R23", "FAILED, CANCELED and REJECTED are recorded as final with the agent's status message; nothing more is sent to that task.";
        "DLG-STATE-04", Must, false, Some(unknown_state_observed), "000 Mapping every state", "An unknown or UNSPECIFIED state does not crash the delegator; it is recorded and the task is still observed until its deadline.";
        "DLG-STATE-05", Must, true, Some(no_message_to_terminal_task), "000 Terminal is final; Failure modes: messaging a terminal task; R23", "No message is ever sent to a task in a terminal state.";
        "DLG-STATE-06", Should, false, Some(refinement_is_new_task_in_context), "000 Terminal is final; R20", "A refinement or retry after a final state is a new task in the same contextId, with the old task in referenceTaskIds.";
        "DLG-INPUT-01", Must, true, Some(answers_continue_task_with_new_message_id), "000 Interrupted states; R18; spec §3.4.3", "An answer to INPUT_REQUIRED carries the same taskId, a new messageId and, if it carries a contextId, the task's own (spec §3.4.3 allows taskId alone).";
        "DLG-INPUT-02", Must, false, Some(questions_answered_from_held_data), "000 Interrupted states", "A question about data the delegation holds is answered from it, and the answer is recorded with its source.";
        "DLG-INPUT-03", Must, true, Some(unknown_questions_escalated_not_guessed), "000 Failure modes: guessed inputs", "A question the delegator cannot answer from its own data is escalated to its caller, never guessed.";
        "DLG-INPUT-04", Should, false, Some(input_rounds_capped), "000 Interrupted states", "Input rounds per delegation are capped; past the cap the delegation fails instead of answering again.";
        "DLG-AUTH-01", Must, true, Some(own_credential_never_forwarded), "000 Failure modes: credential forwarding", "The delegator's own credential never reaches another agent.";
        "DLG-AUTH-02", Must, false, Some(scoped_credential_escalated_and_confined), "000 Interrupted states; R28, R29", "AUTH_REQUIRED is escalated for a credential scoped to that agent and task, which is then used only there.";
        "DLG-AUTH-03", Must, false, Some(every_auth_round_escalated), "spec §7.6.4", "Every AUTH_REQUIRED is escalated anew: a credential given for one auth round is never assumed to authorise a later one.";
        "DLG-AUTH-04", Should, false, Some(auth_escalation_explains), "spec §7.6.2", "An auth escalation passes the agent's explanatory status message up (escalate.question).";
        "DLG-UNTRUSTED-01", Must, false, Some(planted_instructions_ignored), "000 Accepting results", "Text from another agent (questions, status messages, artifacts) is data: instruction-like text changes nothing the delegator sends.";
        "DLG-UNTRUSTED-02", Must, false, Some(agent_names_never_steer_writes), "spec §14.1.1", "Names an agent chooses (artifact ids and names, part filenames) never decide where the delegator writes: nothing is written outside its store directory.";
        "DLG-SECRET-01", Must, true, Some(no_secret_in_plaintext), "spec §13.4", "No secret the delegator holds (its own credential, a scoped credential, a push token) appears in plaintext in what it writes: driver messages, stderr, its snapshot and dead-letter records, files under its store directory (a `Scheme token` credential counts by its token too; a hash of a secret is not the secret; secrets shorter than 8 bytes are not searched for, they would match by chance).";
        "DLG-LIMIT-01", Must, false, Some(past_deadline_refused), "000 Budgets: deadlines shrink", "Work whose deadline is already past is refused before anything is sent.";
        "DLG-LIMIT-02", Must, true, Some(child_deadline_has_margin), "000 Budgets: deadlines shrink", "Each child gets a deadline earlier than the parent's by a safety margin.";
        "DLG-LIMIT-03", Must, false, Some(cancel_at_local_deadline), "000 Budgets: enforce locally", "At its own deadline the delegator calls CancelTask, whatever the agent does with the metadata.";
        "DLG-LIMIT-04", Must, false, Some(cancel_not_found_resolved_by_reading), "000 Budgets: cancellation; R25, R27", "A -32002 from CancelTask is resolved by reading the final state, not treated as fatal.";
        "DLG-LIMIT-05", Must, true, Some(child_budgets_within_parent), "000 Budgets: budgets split", "The budgets given to children never sum to more than the parent's remainder.";
        "DLG-LIMIT-06", Should, false, Some(budget_reserve_kept), "000 Budgets: budgets split", "A reserve is kept for retries when splitting a budget.";
        "DLG-LIMIT-07", Must, false, Some(too_deep_refused), "000 Depth and chain are checked", "Incoming work deeper than the limit is refused with a clear reason.";
        "DLG-LIMIT-08", Must, true, Some(chain_and_depth_extended), "000 Depth and chain; 001 Don't 1", "Before re-delegating, the delegator adds its own identity to chain and increments depth.";
        "DLG-LIMIT-09", Must, false, Some(loop_refused), "000 Depth and chain", "Incoming work whose chain already holds the delegator's identity is refused (a loop becomes a fast rejection).";
        "DLG-OBS-01", Must, true, Some(every_task_observed_until_final), "000 Observing and recovering", "Every open task is observed until final by streaming, push or polling; none is left unwatched.";
        "DLG-OBS-02", Must, true, Some(early_stream_end_followed_up), "000 Observing; R37, R38, R39", "A stream that ends before a final state is followed by SubscribeToTask or GetTask, not taken as an outcome.";
        "DLG-OBS-03", Must, true, Some(only_completed_work_committed), "000 Accepting results (streaming)", "Only what a completed task delivers is committed; streamed chunks before that are progress.";
        "DLG-OBS-04", Must, false, Some(forged_push_rejected), "000 Sending (push config); R52", "Push notifications are accepted only with the configured token; duplicates are harmless.";
        "DLG-OBS-05", Should, true, Some(polling_backs_off), "000 Operations and trade-offs", "Polling backs off; it does not hammer GetTask.";
        "DLG-PUSH-01", Must, false, Some(genuine_pushes_acknowledged), "spec §4.3.3, §13.2", "The webhook answers 2xx to every genuine push (the configured token, a task it created).";
        "DLG-PUSH-02", Must, false, Some(foreign_push_changes_nothing), "spec §4.3.3, §13.2", "A push about a task the delegator did not create changes no delegation.";
        "DLG-PUSH-03", Should, false, Some(push_tokens_unique), "spec §13.2", "Each push config gets its own token (unique, single-purpose).";
        "DLG-ART-01", Must, false, Some(appends_joined_in_order), "001 Do 2", "Chunks with append: true are joined in order by artifactId; a chunk without it starts or replaces that artifact.";
        "DLG-ART-02", Must, false, Some(every_chunk_counts), "001 Don't 2", "Every chunk counts: the result is not the last event alone.";
        "DLG-ART-03", Must, false, Some(url_parts_fetched), "001 Do 3; Handling large artifacts", "A url part is fetched on its own path and its size bound is enforced while reading.";
        "DLG-ART-04", Must, true, Some(reported_bytes_match), "001 Code walkthrough (byte-length check)", "The byte length and sha256 the delegator reports equal the bytes the agent sent.";
        "DLG-ART-05", Must, false, Some(wrong_media_type_rejected), "000 Accepting results", "An artifact of a media type the request did not accept is rejected: it is never released as an accepted result. The delegation may fail, complete without it, or refine; the rejection and its reason are reported.";
        "DLG-ART-06", Must, false, Some(oversize_rejected), "001 ArtifactSpec.max_size_bytes; 000 bound sizes", "An artifact over max_size_bytes is rejected once the bound is crossed, without buffering the rest; as in DLG-ART-05 it is never released, and the rejection is reported.";
        "DLG-ART-07", Must, false, Some(schema_violation_rejected), "000 Accepting results", "Structured data parts are validated against the expected schema before use; an invalid one is never released (fail, complete without it, or refine), and the rejection is reported.";
        "DLG-ART-08", Should, false, Some(artifact_provenance_recorded), "000 Accepting results", "Each artifact's provenance (agent, skill, task) is recorded.";
        "DLG-ART-09", Must, false, Some(protocol_error_not_garbage), "R34; 001 Don'ts", "An agent protocol error in the stream never produces silent garbage: the delegator either fails the delegation visibly, or reports the problem and recovers the result from a fresh GetTask snapshot that it then reports byte-exact. An event or answer that only lacks REQUIRED fields (spec §5.7) may also be rejected (ignored) while the delegator carries on, as long as nothing from it is committed.";
        "DLG-ART-10", Should, false, Some(memory_bounded_while_streaming), "001 Handling large artifacts", "Memory stays bounded while a large artifact streams in.";
        "DLG-RETRY-01", Must, true, Some(retries_bounded), "001 Retry and dead letter", "A transient failure (connection dropped, 5xx, 429) is retried at most max_retries times.";
        "DLG-RETRY-02", Should, false, Some(retries_back_off), "001 Backoff strategy", "Retries back off exponentially with jitter (successive gaps grow, within the configured base and cap), and honour Retry-After.";
        "DLG-RETRY-03", Must, false, Some(indefinite_send_resent_with_same_id), "000 Sending; Recovery", "A send whose response was lost (indefinite) is resent only with the same messageId.";
        "DLG-RETRY-04", Must, false, Some(exhausted_retries_dead_lettered), "001 Retry and dead letter; Chain-aware DLQ", "When retries are exhausted the delegation is dead-lettered with its request, errors, partial artifacts and chain.";
        "DLG-REC-01", Must, false, Some(nothing_lost_across_restart), "000 Observing and recovering", "After a restart every delegation that was open is still known and is driven to an outcome.";
        "DLG-REC-02", Must, false, Some(unknown_task_resolved_after_restart), "000 Recovery; spec §3.4.1", "A record without a task id is resolved by resending with the same messageId, or by finding the task (ListTasks) in a context the agent gave before the crash; a client-minted context is not presumed.";
        "DLG-REC-03", Must, false, Some(open_tasks_reconciled_after_restart), "000 Recovery", "A record with an open task id is reconciled with GetTask, then observed again.";
        "DLG-REC-04", Must, false, Some(purged_task_marked_lost), "000 Recovery", "-32001 for a task it created marks the delegation LOST; it is not silently recreated.";
        "DLG-REC-05", Must, true, Some(one_task_per_intent), "000 Sending; Recovery", "No intent ever creates two remote tasks when the agent deduplicates messageId.";
        "DLG-REC-06", Must, false, Some(artifacts_exact_after_recovery), "000; 001", "Artifacts completed after a recovery are byte-exact.";
        "DLG-URL-01", Must, false, Some(url_parts_validated), "spec §14.1.1", "A url part is validated before anything is fetched (against server-side request forgery): only http(s), no userinfo, an origin among init.fetch_origins, redirects only to such origins. A part that fails is never fetched nor accepted as a result: the delegation fails, or completes without that artifact.";
        "DLG-SIGN-01", Must, false, Some(good_signature_accepted), "spec §8.4.1, §8.4.3", "A card whose signature verifies with a trusted, unexpired key is accepted, also when it is served with default-valued members the signature does not cover (they are dropped before JCS canonicalisation): the work goes to that agent or another acceptable one, it is not refused.";
        "DLG-SIGN-02", Must, false, Some(bad_signature_never_trusted), "spec §8.4.3", "A delegator told to require signatures (init.card_signatures.required) never uses a card whose signatures do not verify: altered after signing, or signed by a key that has expired or that it does not trust (expired or revoked keys MUST NOT be used). Nothing is sent to that agent's interfaces (its card and keys may be fetched); the work goes to another trusted agent or ends with a visible outcome.";
        "DLG-SIGN-03", Should, false, Some(card_trusted_only_once_verified), "spec §8.4.3, §14.3", "A card is trusted only once one of its signatures verifies (SHOULD): a signed card whose signatures do not verify is not used even where signatures are not required, and an unsigned card is not used where they are; the work goes elsewhere or ends visibly.";
        "DLG-TLS-01", Should, true, Some(bad_certificates_refused), "spec §7.2", "An agent whose TLS certificate does not verify against the trusted roots (init.tls_roots: issued by an unknown authority, expired, or for another host name) gets nothing: no request reaches it, not even a card fetch; the delegation still reaches a visible outcome (fails, escalates, or completes through a sound agent).";
        "DLG-TLS-02", Should, true, Some(https_card_not_downgraded), "spec §7.1, §13.4 (a production MUST, judged SHOULD)", "An agent whose card came over HTTPS but lists only plain http:// interfaces is not called (over plain HTTP or at a URL its card does not list); the delegation still reaches a visible outcome. §7.1 makes encryption a MUST of production deployments; the client's share is judged SHOULD because the plaintext interface is the agent's deployment fault and the client duties §7.2 and §13.4 state are SHOULDs.";
        "DLG-TLS-03", Should, true, Some(modern_tls_negotiated), "spec §7.1, §13.4", "Every TLS connection the delegator completes negotiates TLS 1.3 when the agent offers it (the mock agents offer 1.3 and 1.2).";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::*;

    #[test]
    fn good_delegation_passes_every_always_on_rule() {
        let c = good("expect = { state = [\"COMPLETED\"] }");
        // An always-on rule without a checker yet is reported NOT TESTED, never judged.
        for r in registry().into_iter().filter(|r| r.always) {
            let Some(f) = r.check else { continue };
            assert!(
                !fails(c.check(f)),
                "{} failed on a good delegation: {:?}",
                r.id,
                c.check(f)
            );
        }
    }
}
