-- +goose Up
-- The audit log is append-only for the application: the API and the workers may write entries and read them,
-- never rewrite or remove one, so a compromised or buggy request path cannot cover its tracks. Deleting an
-- organization still removes its entries: the ON DELETE CASCADE of audit_log.organization_id runs as the
-- table's owner, not as outflow_app. Retention, if ever needed, belongs in a narrow SECURITY DEFINER function.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM outflow_app;
