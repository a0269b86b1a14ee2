// Package db owns Outflow's connection to Postgres: the application pool (which runs as the outflow_app role
// so row-level security applies), the one transaction helper and its organization-scoped form, the schema
// migrations, and the single place where Postgres errors become API errors.
//
// Tenancy rule: every query on a tenant table names organization_id in its SQL and runs inside WithOrgTx,
// which also sets the organization for the row-level security policies. A forgotten WHERE therefore returns
// nothing of another organization instead of leaking it.
package db
