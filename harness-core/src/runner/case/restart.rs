//! The crash of a case: arming it, when it is due, the kill and the restart on the same store
//! (with the store scanned as the killed process left it).

use super::*;

impl<'a> CaseRun<'a> {
    /// Crash injection: the injector watches the journal as its tripwire and SIGKILLs the
    /// delegator's process group at the trigger's named point (see [`super::crash`]);
    /// [`Self::take_in`] then restarts it. Memory cases watch the process group's memory.
    pub(super) fn arm_crash(&mut self) {
        if self.s.memory_bound_mib.is_some() {
            self.proc.watch_memory();
        }
        let Some(c) = self.s.crash.as_ref() else {
            return;
        };
        let killer = self.proc.killer();
        let k = match c.trigger {
            CrashTrigger::AtEvent => c.event.map_or(1, std::num::NonZeroU64::get),
            _ => c.chunks,
        };
        let injector = CrashInjector::new(
            c.trigger,
            k,
            self.journal.clone(),
            Arc::new(move || killer.kill()),
        );
        injector.arm();
        self.crash = Some(injector);
    }

    /// The crash, once the injector killed the delegator and it is still to be restarted.
    pub(super) fn crash_due(&self) -> Option<CrashRecord> {
        self.crash.as_ref().filter(|_| !self.crashed)?.record()
    }

    /// SIGKILL the delegator, keep what it wrote before it died, and restart it on the same
    /// store with `recovering: true`. False when the case cannot go on.
    pub(super) async fn crash_and_restart(&mut self, record: CrashRecord) -> bool {
        self.crashed = true;
        self.proc.kill_group().await;
        self.intake.note(format!(
            "crash injected: SIGKILL after journal seq {} ({:?} fired at seq {}: {})",
            record.last_seq_before_kill, record.trigger, record.fired_seq, record.point
        ));
        if !record.at_named_point {
            self.intake.note(format!(
                "crash point missed: the delegator went past the point {:?} names before the kill landed, so the case did not test it",
                record.trigger
            ));
        }
        self.facts.crash = Some(record);
        // What the killed process wrote before it died is evidence too.
        let until = (tokio::time::Instant::now() + Duration::from_secs(1)).min(self.deadline);
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            match self.proc.recv(left).await {
                Some(DelegatorOutput::Message(m)) => {
                    if let Some(r) = self.intake.message(&m) {
                        if let Received::Message(msg) = &r {
                            self.unacked.received(msg);
                        }
                        self.backlog.push_back(r);
                    }
                }
                Some(DelegatorOutput::Garbage(g)) => {
                    if !self.garbage(Some(&g)) {
                        return false;
                    }
                }
                Some(DelegatorOutput::TooLong) => {
                    if !self.garbage(None) {
                        return false;
                    }
                }
                Some(DelegatorOutput::Eof) | None => break,
            }
        }
        if let Some(c) = self.facts.crash.as_mut() {
            c.messages_before_restart = Some(self.intake.messages.len());
        }
        self.scan_store_at_kill().await;
        self.intake.new_life();
        if self.s.memory_bound_mib.is_some() {
            self.memory_before_crash = self.memory_reading();
        }
        let tap = self.facts.capture.new_life();
        match DelegatorProcess::spawn_tapped(
            &self.cfg.delegator,
            self.facts.stderr.clone(),
            Some(tap),
        ) {
            Ok(p) => self.proc = p,
            Err(e) => {
                self.intake.note(format!("restart failed: {e}"));
                return false;
            }
        }
        let init = self.init_message(true);
        self.send(&init).await;
        // What the killed process never acknowledged may never have reached its store: a real
        // caller sends it again, with the same ids (a correct delegator takes a `delegate` it
        // had recorded as that same delegation).
        for msg in self.unacked.take() {
            let what = match &msg {
                ToDelegator::Delegate(d) => format!("delegate {}", d.id),
                ToDelegator::Cancel(c) => format!("cancel {}", c.id),
                _ => continue,
            };
            self.intake.note(format!(
                "re-sent after the restart (the killed process had not acknowledged it): {what}"
            ));
            self.send(&msg).await;
        }
        true
    }

    /// DLG-SECRET-01: the store as the killed process left it, scanned for the secrets known at
    /// the kill, before the restarted process may rewrite it (a secret it then removes was still
    /// written).
    pub(super) async fn scan_store_at_kill(&mut self) {
        let secrets = self.journal.with_entries(|j| {
            known_secrets(
                OWN_CREDENTIAL,
                &self.facts.agent_credentials,
                &self.facts.given,
                j,
            )
        });
        let store = self.facts.store.clone();
        self.facts.store_at_kill =
            tokio::task::spawn_blocking(move || scan_store_at_kill(&secrets, &store))
                .await
                .ok();
    }
}
