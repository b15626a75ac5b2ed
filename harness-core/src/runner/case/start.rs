//! Starting the delegator of a case: the `init` message (with the options of the scenario),
//! its memory reading, the first delegations.

use super::*;

impl<'a> CaseRun<'a> {
    pub(super) fn init_message(&self, recovering: bool) -> ToDelegator {
        let mut msg = init_message(
            &self.facts.store.display().to_string(),
            recovering,
            &self.cards,
            Some(WEBHOOK_BASE),
            SELF_URL,
            OWN_CREDENTIAL,
            self.options.clone(),
        );
        if let ToDelegator::Init(init) = &mut msg {
            init.agent_credentials = self.facts.agent_credentials.iter().cloned().collect();
            init.extensions = self.s.extensions.clone();
            init.fetch_origins = self.fetch_origins.clone();
            init.card_signatures = self
                .s
                .card_signature_policy(self.s.network.seed ^ self.cfg.seed);
            init.tls_roots = self
                .facts
                .tls_roots
                .as_ref()
                .map(|p| p.display().to_string());
        }
        msg
    }

    /// The process group's memory while it ran, with the baseline taken at `init_ok` (memory
    /// cases only). After a crash it is the killed process's: the restarted one gets what was
    /// already produced as one task snapshot (`SendStreamingMessage` deduplicated, or
    /// `SubscribeToTask`), not as a stream, so DLG-ART-10 judges the life that streamed, on
    /// what streamed before the kill.
    pub(super) fn memory_reading(&self) -> Option<MemoryReading> {
        if let Some(m) = &self.memory_before_crash {
            return Some(m.clone());
        }
        let mut m = self.proc.memory()?;
        m.baseline_kib = self.memory_baseline_kib;
        Some(m)
    }

    /// Send `init` and wait for `init_ok`, bounded by [`INIT_WAIT`] and the case deadline.
    pub(super) async fn initialise(&mut self) {
        let init = self.init_message(false);
        self.alive = self.send(&init).await;
        let init_until = (tokio::time::Instant::now() + INIT_WAIT).min(self.deadline);
        let mut inited = false;
        while self.alive && !inited && !self.flooded {
            // A kill before `init_ok` (an `at_event` crash during start-up): restart and wait
            // for the restarted process's `init_ok`.
            if let Some(record) = self.crash_due() {
                self.alive = self.crash_and_restart(record).await;
                continue;
            }
            let left = init_until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                self.intake.note(format!(
                    "the delegator did not answer init within {} ms",
                    INIT_WAIT.as_millis().min(u128::from(self.s.timeout_ms))
                ));
                break;
            }
            match self.proc.recv(left).await {
                None => {}
                Some(DelegatorOutput::Message(m)) => match self.intake.message(&m) {
                    Some(Received::Message(FromDelegator::InitOk(_))) => {
                        inited = true;
                        // Scenario deadlines count from here, when delegations can start: a
                        // delegator slow to start on a loaded machine does not eat into them.
                        self.facts.start = time::OffsetDateTime::now_utc();
                        // So does the case's own bound: an interpreter that took seconds to
                        // import its SDK gets the whole `timeout_ms` for the case's work.
                        self.deadline = self.deadline.max(
                            tokio::time::Instant::now() + Duration::from_millis(self.s.timeout_ms),
                        );
                        self.facts.started_at_us =
                            Some(self.facts.network_started.elapsed().as_micros() as u64);
                        self.memory_baseline_kib = self.proc.group_rss_kib();
                    }
                    Some(Received::Message(FromDelegator::Error(e))) => {
                        if e.code == DriverErrorCode::Unsupported {
                            self.facts.unsupported = true;
                        }
                        self.intake.note(format!("init refused: {m}"));
                        self.alive = false;
                    }
                    Some(Received::Message(other)) => self
                        .intake
                        .note(format!("contract: {} before init_ok", other.type_name())),
                    Some(Received::Snapshot(_)) => self
                        .intake
                        .note("contract: snapshot_ok before init_ok".into()),
                    // Already noted: an unknown type, or a message the contract does not accept.
                    None => {}
                },
                Some(DelegatorOutput::Garbage(g)) => {
                    self.garbage(Some(&g));
                }
                Some(DelegatorOutput::TooLong) => {
                    self.garbage(None);
                }
                // Our own kill: the restart comes next turn.
                Some(DelegatorOutput::Eof) if self.crash_due().is_some() => {}
                Some(DelegatorOutput::Eof) => {
                    self.intake
                        .note("the delegator exited before init_ok".into());
                    self.alive = false;
                }
            }
        }
        self.facts.inited = inited && !self.flooded;
    }

    /// Send a `delegate` for `d`, noting a clamped deadline.
    pub(super) async fn delegate(&mut self, d: &Delegation) {
        let (msg, note) = delegate_message(d, self.facts.start);
        if let Some(n) = note {
            self.intake.note(n);
        }
        self.send(&ToDelegator::Delegate(msg)).await;
    }

    /// The delegations that wait for no other.
    pub(super) async fn send_first_delegations(&mut self) {
        if !self.facts.inited {
            return;
        }
        for d in self.s.delegations.iter().filter(|d| d.after.is_none()) {
            self.delegate(d).await;
        }
    }
}

/// The `init` options: the harness's fast timings, overridden by the scenario's `options`. A
/// scenario option the typed contract does not accept (such as a string `seed`) is still sent
/// as written, with every option passed through untyped.
pub(super) fn init_options(seed: u64, overrides: &BTreeMap<String, Value>) -> InitOptions {
    let defaults = InitOptions {
        seed: Some(seed),
        retry_base_ms: Some(crate::rules::DEFAULT_RETRY_BASE_MS),
        retry_cap_ms: Some(crate::rules::DEFAULT_RETRY_CAP_MS),
        poll_interval_ms: Some(crate::rules::DEFAULT_POLL_INTERVAL_MS),
        deadline_margin_ms: Some(200),
        ..InitOptions::default()
    };
    if overrides.is_empty() {
        return defaults;
    }
    let mut options = match serde_json::to_value(&defaults) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (k, v) in overrides {
        options.insert(k.clone(), v.clone());
    }
    serde_json::from_value(Value::Object(options.clone())).unwrap_or(InitOptions {
        extra: options,
        ..InitOptions::default()
    })
}
