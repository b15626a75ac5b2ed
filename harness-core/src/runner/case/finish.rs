//! The end of a case: the snapshot, the stop, and the verdict from the evidence.

use super::*;

impl<'a> CaseRun<'a> {
    /// Ask for the snapshot and wait (at most 5 s) for `snapshot_ok`.
    pub(super) async fn take_snapshot(&mut self, stalled: bool) {
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        if !self.facts.inited
            || self.flooded
            || stalled
            || !self.send_until(&ToDelegator::Snapshot, until).await
        {
            return;
        }
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            match self.proc.recv(left).await {
                Some(DelegatorOutput::Message(m)) => {
                    if let Some(Received::Snapshot(records)) = self.intake.message(&m) {
                        self.facts.snapshot = Some(records);
                        break;
                    }
                }
                Some(DelegatorOutput::Garbage(g)) => {
                    if !self.garbage(Some(&g)) {
                        break;
                    }
                }
                Some(DelegatorOutput::TooLong) => {
                    if !self.garbage(None) {
                        break;
                    }
                }
                Some(DelegatorOutput::Eof) | None => break,
            }
        }
    }

    /// Stop the delegator: EOF and a grace period, or a kill after a flood.
    pub(super) async fn stop(mut self, stalled: bool) -> (Intake, Facts) {
        if self.flooded {
            self.proc.kill_group().await;
        } else {
            // Without init_ok, or with a stdin it does not read, there is no work to let it finish.
            let grace = if self.facts.inited && !stalled {
                Duration::from_secs(3)
            } else {
                Duration::from_millis(300)
            };
            self.proc.finish(grace).await;
        }
        (self.intake, self.facts)
    }
}

/// Judge the evidence and fill in the case result.
pub(super) fn verdict(
    s: &Scenario,
    intake: &mut Intake,
    facts: Facts,
    entries: Vec<Entry>,
    memory: Option<MemoryReading>,
    mut result: CaseResult,
    t0: Instant,
) -> CaseResult {
    let messages = std::mem::take(&mut intake.messages);
    let typed = std::mem::take(&mut intake.typed);
    // Before the store is removed below: what the reported files hold.
    let files = crate::rules::hash_reported_files(&facts.outcomes);
    // DLG-UNTRUSTED-02, where it is judged: what agent-chosen names made outside the store
    // during the case.
    let untrusted_02 = "DLG-UNTRUSTED-02";
    let judged = s.rules.iter().any(|r| r == untrusted_02)
        || crate::rules::registry()
            .iter()
            .any(|r| r.id == untrusted_02 && r.always);
    let trap_hits = if judged {
        crate::rules::trap_hits(&facts.store, facts.start.into())
    } else {
        Vec::new()
    };
    let ev = Evidence {
        scenario: s,
        journal: &entries,
        messages: &typed,
        outcomes: &facts.outcomes,
        snapshot: facts.snapshot.as_deref(),
        self_url: SELF_URL,
        credential: OWN_CREDENTIAL,
        given: &facts.given,
        crash_seq: facts.crash.as_ref().map(|c| c.last_seq_before_kill),
        start: facts.start,
        forged_pushes: &facts.forged,
        memory,
        done_at: &facts.done_at,
        artifact_files: &files,
        secrets: &facts.secrets,
        store_dir: &facts.store,
        trap_hits: &trap_hits,
    };
    if !facts.secrets.limits.is_empty() {
        intake.note(format!(
            "DLG-SECRET-01 judged what was scanned ({}); not scanned: {}",
            facts.secrets.covered.join("; "),
            facts.secrets.limits.join("; ")
        ));
    }
    let verdicts = judge(s, &ev, &entries);
    result.verdict = case_verdict(
        &verdicts,
        intake.contract_broken,
        facts.unsupported,
        facts.inited,
    );
    if facts.crash.as_ref().is_some_and(|c| !c.at_named_point) && result.verdict == Verdict::Pass {
        // The case did not test what it names (a note says why): no PASS.
        result.verdict = Verdict::Unknown;
    }
    result.crash = facts.crash.clone();
    result.started_at_us = facts.started_at_us;
    result.done_at = facts.done_at.clone();
    result.rules = verdicts;
    result.notes = intake.closing_notes();
    result.outcomes = facts.outcomes;
    result.messages = messages;
    result.stderr =
        String::from_utf8_lossy(&facts.stderr.lock().unwrap_or_else(|p| p.into_inner()))
            .into_owned();
    result.journal = entries;
    result.duration_ms = t0.elapsed().as_millis() as u64;
    let _ = std::fs::remove_dir_all(&facts.store);
    if let Some(p) = &facts.tls_roots {
        let _ = std::fs::remove_file(p);
    }
    result
}
