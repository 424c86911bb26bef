//! The offline demo provider.
