//! Routing: the agents' cards (read at start, again when routing needs a card not read yet, on
//! demand for an agent named directly) and choosing the agent for a request.

use super::{Inner, lock};
use crate::agents::{self, AgentInfo};
use crate::request::DelegationRequest;
use std::time::Duration;

/// How long reading one agent card may take.
const CARD_TIMEOUT: Duration = Duration::from_secs(10);

impl Inner {
    /// Read the configured agent cards (`only_missing`: those not read yet), keeping the
    /// configuration order and remembering the errors.
    pub(super) async fn load_cards(&self, only_missing: bool) {
        let known: Vec<String> = self
            .agents
            .read()
            .await
            .iter()
            .map(|a| a.card_url.clone())
            .collect();
        let wanted: Vec<String> = self
            .cfg
            .agents
            .iter()
            .filter(|u| !only_missing || !known.contains(u))
            .cloned()
            .collect();
        if wanted.is_empty() {
            return;
        }
        let futs = wanted.iter().map(|u| {
            agents::fetch_card(
                self.client.http(),
                u,
                CARD_TIMEOUT,
                &self.cfg.options.bindings,
            )
        });
        let results = futures::future::join_all(futs).await;
        let mut agents = self.agents.write().await;
        let mut errors = lock(&self.card_errors);
        errors.clear();
        for r in results {
            match r {
                Ok(a) => {
                    if !agents.iter().any(|x| x.card_url == a.card_url) {
                        agents.push(a);
                    }
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    errors.push(e);
                }
            }
        }
        // Keep configuration order.
        let order = &self.cfg.agents;
        agents.sort_by_key(|a| {
            order
                .iter()
                .position(|u| u == &a.card_url)
                .unwrap_or(usize::MAX)
        });
    }

    /// The agent for `req` (only `only`, if given); cards not read yet are read again first.
    pub(super) async fn route(
        &self,
        req: &DelegationRequest,
        only: Option<&str>,
    ) -> Result<AgentInfo, agents::RouteError> {
        if let Some(o) = only
            && !self.cfg.agents.iter().any(|u| u == o)
            && !self.agents.read().await.iter().any(|a| a.card_url == o)
        {
            // An agent named directly (CLI, refinement of an old record) is read on demand.
            if let Ok(a) = agents::fetch_card(
                self.client.http(),
                o,
                CARD_TIMEOUT,
                &self.cfg.options.bindings,
            )
            .await
            {
                self.agents.write().await.push(a);
            }
        }
        {
            let agents = self.agents.read().await;
            if let Ok(a) = agents::route(&agents, &req.capability, &req.artifact_spec, only) {
                return Ok(a.clone());
            }
        }
        self.load_cards(true).await;
        let agents = self.agents.read().await;
        agents::route(&agents, &req.capability, &req.artifact_spec, only).cloned()
    }

    /// The agent whose card is at `card_url`, reading the card if it is not known yet.
    pub(super) async fn agent_for(&self, card_url: &str) -> Option<AgentInfo> {
        if let Some(a) = self
            .agents
            .read()
            .await
            .iter()
            .find(|a| a.card_url == card_url)
        {
            return Some(a.clone());
        }
        match agents::fetch_card(
            self.client.http(),
            card_url,
            CARD_TIMEOUT,
            &self.cfg.options.bindings,
        )
        .await
        {
            Ok(a) => {
                self.agents.write().await.push(a.clone());
                Some(a)
            }
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }
}
