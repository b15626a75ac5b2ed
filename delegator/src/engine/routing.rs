//! Agent cards and routing: the cards read at start (with the extended card where the delegator
//! is entitled to it), kept in one cache entry per agent and revalidated once stale before the
//! agent is used again, and choosing the agent for a request.
//!
//! **Caching** (A2A §8.6, RFC 9111): a card is fetched at `init` and reused while fresh
//! (`Cache-Control: max-age` less `Age`, or `Expires`; without them
//! [`DEFAULT_CARD_MAX_AGE`](crate::agents::DEFAULT_CARD_MAX_AGE); `no-cache` and `no-store`
//! honoured). Once stale, it is revalidated (`If-None-Match` with its `ETag`, `If-Modified-Since`
//! with its `Last-Modified`) before the agent takes a new delegation or a recovered one: a `304`
//! refreshes its freshness, a `200` with another card replaces it, and new work then uses the
//! new card's interfaces and tenant. Running delegations keep the card they started with.
//! Revalidations run one at a time, so concurrent delegations never fetch a card twice; an agent
//! whose card cannot be revalidated (unreachable) is used with the card it had.
//!
//! **Extended card** (§3.1.11, §13.3): when the public card declares
//! `capabilities.extendedAgentCard` and the delegator holds a credential (`init.agent_credentials`)
//! of a scheme the public card's `securitySchemes` declare, `GetExtendedAgentCard` is called with
//! it as `Authorization`; the extended card's skills and interfaces then replace the public
//! card's. It is fetched again only when the public card changes. Without such a credential the
//! call is never made (it could not be authenticated) and the public card is used.

use super::{Inner, lock};
use crate::agents::{self, AgentInfo, CardError, CardFetch, RouteError};
use crate::request::DelegationRequest;
use a2a_protocol::Method;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long reading one agent card may take (also GetExtendedAgentCard).
const CARD_TIMEOUT: Duration = Duration::from_secs(10);

impl Inner {
    /// The credential for `card_url` from `init.agent_credentials`, if any.
    pub(super) fn agent_credential(&self, card_url: &str) -> Option<&str> {
        self.cfg.agent_credentials.get(card_url)
    }

    /// The agent at `card_url` from a fresh fetch (conditional when `previous` is its cache
    /// entry): a 304 or an unchanged public card keeps `previous` (its extended card too) with
    /// the new freshness; another card is read anew, with its extended card where entitled.
    async fn read_agent(
        &self,
        card_url: &str,
        previous: Option<&AgentInfo>,
    ) -> Result<AgentInfo, CardError> {
        let http = self.client.http();
        let fetched =
            agents::fetch_card_doc(http, card_url, CARD_TIMEOUT, previous.map(|p| &p.cache))
                .await?;
        let (doc, cache) = match fetched {
            CardFetch::NotModified(cache) => {
                if let Some(p) = previous {
                    tracing::debug!(card = card_url, "agent card not modified");
                    return Ok(AgentInfo { cache, ..p.clone() });
                }
                return Err(CardError {
                    url: card_url.to_string(),
                    message: "304 to an unconditional request".into(),
                });
            }
            CardFetch::Card(doc, cache) => (doc, cache),
        };
        let prefs = &self.cfg.options.bindings;
        // With trust roots, only `https://` interfaces are used (no plaintext fallback).
        let tls_only = self.client.tls_only();
        let parse = |doc: &serde_json::Value| {
            let mut a = agents::parse_card(card_url, doc, prefs)?;
            if tls_only {
                a.endpoint = a.endpoint.https_only().map_err(|message| CardError {
                    url: card_url.to_string(),
                    message,
                })?;
            }
            Ok::<_, CardError>(a)
        };
        let mut public = parse(&doc)?;
        if let Some(p) = previous
            && p.public_card == public.card
        {
            return Ok(AgentInfo { cache, ..p.clone() });
        }
        if previous.is_some() {
            tracing::info!(
                card = card_url,
                "agent card changed: new work uses the new card"
            );
        }
        public.cache = cache;
        public = public.with_supported_extensions(&self.cfg.extensions);
        public.untrusted_card = crate::signatures::card_problem(
            &doc,
            self.cfg.card_signatures.as_ref(),
            crate::signatures::now(),
            self.cfg.bugs,
        );
        if let Some(why) = &public.untrusted_card {
            // Nothing is sent to an agent whose card is not trusted (§8.4.3), not even
            // GetExtendedAgentCard.
            tracing::warn!(card = card_url, "agent not used: {why}");
            return Ok(public);
        }
        let credential = self.agent_credential(card_url);
        public.credential_on_every_request =
            credential.is_some_and(|c| agents::credential_meets_requirements(&public.card, c));
        let entitled = public.card.capabilities.extended_agent_card == Some(true)
            && credential.is_some_and(|c| agents::credential_fits_card(&public.card, c));
        let (true, Some(credential)) = (entitled, credential) else {
            return Ok(public);
        };
        match self
            .client
            .call(
                &public.endpoint,
                Method::GetExtendedAgentCard,
                serde_json::json!({}),
                Some(credential),
                CARD_TIMEOUT,
            )
            .await
        {
            Ok(r) => match parse(&r.result) {
                Ok(ext) => Ok(public.with_extended_card(ext, &self.cfg.extensions)),
                Err(e) => {
                    tracing::warn!("extended card: {e}; the public card is used");
                    Ok(public)
                }
            },
            Err(e) => {
                tracing::warn!(
                    card = card_url,
                    "GetExtendedAgentCard failed: {e}; the public card is used"
                );
                Ok(public)
            }
        }
    }

    /// Put `a` in the agent list (replacing its old entry), keeping configuration order.
    async fn upsert(&self, a: Arc<AgentInfo>) {
        let mut agents = self.agents.write().await;
        match agents.iter_mut().find(|x| x.card_url == a.card_url) {
            Some(slot) => *slot = a,
            None => agents.push(a),
        }
        let order = &self.cfg.agents;
        agents.sort_by_key(|a| {
            order
                .iter()
                .position(|u| u == &a.card_url)
                .unwrap_or(usize::MAX)
        });
    }

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
        let results =
            futures::future::join_all(wanted.iter().map(|u| self.read_agent(u, None))).await;
        let mut errors = Vec::new();
        for r in results {
            match r {
                Ok(a) => self.upsert(Arc::new(a)).await,
                Err(e) => {
                    tracing::warn!("{e}");
                    errors.push(e);
                }
            }
        }
        *lock(&self.card_errors) = errors;
    }

    /// The agent at `card_url` ready to be used now: its cached entry when fresh, else the
    /// entry revalidated (kept as it was when the agent cannot be reached).
    async fn fresh_agent(&self, card_url: &str) -> Option<Arc<AgentInfo>> {
        let cached = || async {
            let agents = self.agents.read().await;
            agents.iter().find(|a| a.card_url == card_url).cloned()
        };
        let current = cached().await?;
        if current.cache.is_fresh(Instant::now()) {
            return Some(current);
        }
        // Stale: one revalidation at a time; whoever waited finds the entry it refreshed.
        let _one_at_a_time = self.card_refresh.lock().await;
        let current = cached().await?;
        if current.cache.is_fresh(Instant::now()) {
            return Some(current);
        }
        match self.read_agent(card_url, Some(&current)).await {
            Ok(a) => {
                let a = Arc::new(a);
                self.upsert(a.clone()).await;
                Some(a)
            }
            Err(e) => {
                tracing::warn!("revalidating: {e}; the cached card is used");
                Some(current)
            }
        }
    }

    /// Revalidate every stale card (before routing gives up).
    async fn refresh_stale(&self) {
        let stale: Vec<String> = self
            .agents
            .read()
            .await
            .iter()
            .filter(|a| !a.cache.is_fresh(Instant::now()))
            .map(|a| a.card_url.clone())
            .collect();
        for url in stale {
            self.fresh_agent(&url).await;
        }
    }

    /// The first capable agent for `req` (only `only`, if given) whose card, revalidated when
    /// stale, still makes it capable.
    async fn route_cached(
        &self,
        req: &DelegationRequest,
        only: Option<&str>,
    ) -> Result<Arc<AgentInfo>, RouteError> {
        let mut skip: Vec<String> = Vec::new();
        loop {
            let agents = self.agents.read().await.clone();
            let candidates =
                agents::route_candidates(&agents, &req.capability, &req.artifact_spec, only)?;
            let Some(first) = candidates.into_iter().find(|a| !skip.contains(&a.card_url)) else {
                return Err(RouteError(format!(
                    "no agent advertises skill {:?} any more (their cards changed)",
                    req.capability
                )));
            };
            let url = first.card_url.clone();
            let Some(now) = self.fresh_agent(&url).await else {
                skip.push(url);
                continue;
            };
            if now.usable() && now.can_do(&req.capability, &req.artifact_spec) {
                return Ok(now);
            }
            // Its card changed and no longer fits: try the next one.
            skip.push(url);
        }
    }

    /// The agent for `req` (only `only`, if given); cards not read yet, and stale ones, are read
    /// again before giving up.
    pub(super) async fn route(
        &self,
        req: &DelegationRequest,
        only: Option<&str>,
    ) -> Result<Arc<AgentInfo>, RouteError> {
        if let Some(o) = only
            && !self.cfg.agents.iter().any(|u| u == o)
            && !self.agents.read().await.iter().any(|a| a.card_url == o)
        {
            // An agent named directly (CLI, refinement of an old record) is read on demand.
            if let Ok(a) = self.read_agent(o, None).await {
                self.upsert(Arc::new(a)).await;
            }
        }
        if let Ok(a) = self.route_cached(req, only).await {
            return Ok(a);
        }
        self.load_cards(true).await;
        self.refresh_stale().await;
        self.route_cached(req, only).await
    }

    /// The agent whose card is at `card_url` (for a recovered delegation), revalidated when
    /// stale, or read if it is not known yet.
    pub(super) async fn agent_for(&self, card_url: &str) -> Option<Arc<AgentInfo>> {
        if let Some(a) = self.fresh_agent(card_url).await {
            return Some(a);
        }
        match self.read_agent(card_url, None).await {
            Ok(a) => {
                let a = Arc::new(a);
                self.upsert(a.clone()).await;
                Some(a)
            }
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }
}
