//! Routing (DLG-ROUTE-*): capable agents, streaming choice, 0.3 agents spoken to in 0.3, and
//! the protocol binding chosen from the card (advertised only, card order, fallback).
//!
//! `capability`: capable agents, the streaming choice, 0.3 agents, optional capabilities;
//! `binding`: the protocol binding chosen from the card (advertised only, card order, fallback,
//! interface URL and tenant).

mod binding;
mod capability;
#[cfg(test)]
mod tests;

pub(super) use binding::*;
pub(super) use capability::*;

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::Event;
use a2a_protocol::{Binding, Method};
