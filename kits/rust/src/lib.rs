//! A Mexican Train bot for mexican-train-referee (protocol version 1,
//! spec/PROTOCOL.md): the protocol helper in [`protocol`], the strategy in
//! [`strategy`] (the file to replace).

pub mod protocol;
pub mod strategy;
