//! TODO(owner): see docs/DEVELOPING.md
