//! The A2A 1.0 enumerations: [`TaskState`] and [`Role`].
//!
//! On output they are the exact proto names (`"TASK_STATE_COMPLETED"`, `"ROLE_USER"`). On input
//! they also accept the proto numbers and the lowercase/kebab spellings of 0.3 peers, because a
//! tolerant client does; [`crate::conformance`] reports those spellings as deviations.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $num:literal, $proto:literal, [$($alias:literal),*] ; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in proto number order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The exact proto name, as emitted on the 1.0 wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $proto,)+ }
            }

            /// The proto enum number.
            pub fn number(self) -> i32 {
                match self { $($name::$variant => $num,)+ }
            }

            /// The value with this proto number, if any.
            pub fn from_number(n: i64) -> Option<Self> {
                match n { $($num => Some($name::$variant),)+ _ => None }
            }

            /// Parse the exact proto name only (what a strict 1.0 parser accepts).
            pub fn from_proto_name(s: &str) -> Option<Self> {
                match s { $($proto => Some($name::$variant),)+ _ => None }
            }

            /// Parse leniently: the proto name, or a legacy/lowercase spelling.
            pub fn parse_lenient(s: &str) -> Option<Self> {
                if let Some(v) = Self::from_proto_name(s) {
                    return Some(v);
                }
                let lower = s.trim().to_ascii_lowercase().replace('_', "-");
                match lower.as_str() {
                    $( $($alias)|* => Some($name::$variant), )+
                    _ => {
                        let upper = s.trim().to_ascii_uppercase().replace('-', "_");
                        Self::from_proto_name(&upper)
                    }
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a {} name or number", stringify!($name))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::parse_lenient(s)
                            .ok_or_else(|| E::custom(format!("unknown {} {s:?}", stringify!($name))))
                    }
                    fn visit_i64<E: de::Error>(self, n: i64) -> Result<$name, E> {
                        $name::from_number(n)
                            .ok_or_else(|| E::custom(format!("unknown {} number {n}", stringify!($name))))
                    }
                    fn visit_u64<E: de::Error>(self, n: u64) -> Result<$name, E> {
                        let n = i64::try_from(n).map_err(|_| E::custom("enum number out of range"))?;
                        self.visit_i64(n)
                    }
                    fn visit_unit<E: de::Error>(self) -> Result<$name, E> {
                        Ok($name::default())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

proto_enum! {
    /// The state of a task (proto `TaskState`). See reference §3.3.
    TaskState {
        /// Unknown or invalid; never a legitimate state to emit.
        #[default]
        Unspecified = 0, "TASK_STATE_UNSPECIFIED", ["unknown", "unspecified"];
        /// Accepted, not started.
        Submitted = 1, "TASK_STATE_SUBMITTED", ["submitted"];
        /// In progress.
        Working = 2, "TASK_STATE_WORKING", ["working"];
        /// Finished successfully (terminal).
        Completed = 3, "TASK_STATE_COMPLETED", ["completed"];
        /// Finished with an error (terminal).
        Failed = 4, "TASK_STATE_FAILED", ["failed"];
        /// Canceled by the client (terminal).
        Canceled = 5, "TASK_STATE_CANCELED", ["canceled", "cancelled"];
        /// Paused until the client sends more input (interrupted).
        InputRequired = 6, "TASK_STATE_INPUT_REQUIRED", ["input-required"];
        /// Declined by the agent (terminal).
        Rejected = 7, "TASK_STATE_REJECTED", ["rejected"];
        /// Paused until the client supplies credentials (interrupted).
        AuthRequired = 8, "TASK_STATE_AUTH_REQUIRED", ["auth-required"];
    }
}

impl TaskState {
    /// COMPLETED, FAILED, CANCELED or REJECTED: the task accepts no further messages.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// INPUT_REQUIRED or AUTH_REQUIRED: the task waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// SUBMITTED or WORKING: the agent is on it.
    pub fn is_active(self) -> bool {
        matches!(self, TaskState::Submitted | TaskState::Working)
    }
}

proto_enum! {
    /// Who sent a message (proto `Role`). `ROLE_UNSPECIFIED` is invalid on the wire.
    Role {
        /// Invalid: a message must have a sender.
        #[default]
        Unspecified = 0, "ROLE_UNSPECIFIED", ["unspecified"];
        /// Client to server.
        User = 1, "ROLE_USER", ["user"];
        /// Server to client.
        Agent = 2, "ROLE_AGENT", ["agent"];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_and_interrupted_classes() {
        let terminal: Vec<_> = TaskState::ALL.iter().filter(|s| s.is_terminal()).collect();
        assert_eq!(terminal.len(), 4);
        assert!(TaskState::InputRequired.is_interrupted());
        assert!(TaskState::AuthRequired.is_interrupted());
        assert!(!TaskState::Working.is_interrupted());
        assert!(!TaskState::Unspecified.is_terminal());
    }

    #[test]
    fn lenient_spellings() {
        assert_eq!(
            TaskState::parse_lenient("input-required"),
            Some(TaskState::InputRequired)
        );
        assert_eq!(
            TaskState::parse_lenient("input_required"),
            Some(TaskState::InputRequired)
        );
        assert_eq!(
            TaskState::parse_lenient("unknown"),
            Some(TaskState::Unspecified)
        );
        assert_eq!(
            TaskState::parse_lenient("TASK_STATE_CANCELED"),
            Some(TaskState::Canceled)
        );
        assert_eq!(TaskState::parse_lenient("bogus"), None);
        let s: TaskState = serde_json::from_str("6").unwrap();
        assert_eq!(s, TaskState::InputRequired);
        let r: Role = serde_json::from_str("\"agent\"").unwrap();
        assert_eq!(r, Role::Agent);
    }
}
