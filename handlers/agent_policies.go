package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// AgentPolicies serves what API keys and OAuth grants may do without a person: the owner's and settings
// managers' list, create, replace and delete (sessions only), and every caller's effective policy.
type AgentPolicies struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewAgentPolicies builds the agent policy operations.
func NewAgentPolicies(pool *pgxpool.Pool) *AgentPolicies {
	return &AgentPolicies{pool: pool, now: time.Now}
}

// AgentPoliciesList lists the organization's policies, newest first.
func (h *AgentPolicies) AgentPoliciesList(ctx context.Context) (*api.AgentPoliciesListOK, error) {
	_, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return nil, err
	}
	var rows []dbq.AgentPolicy
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = policy.List(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.AgentPoliciesListOK{Data: make([]api.AgentPolicy, len(rows))}
	for i, r := range rows {
		out.Data[i] = agentPolicyOf(r)
	}
	return out, nil
}

// AgentPoliciesCreate binds a policy to one API key or OAuth grant of the organization (policy.Create's
// rules) and answers 201.
func (h *AgentPolicies) AgentPoliciesCreate(ctx context.Context, req *api.AgentPolicy) (*api.AgentPolicy, error) {
	p, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return nil, err
	}
	var row dbq.AgentPolicy
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if row, err = policy.Create(ctx, tx, org, p.UserID, policyInput(req), h.now()); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "agent_policy.created", EntityType: audit.EntityAgentPolicy,
			EntityID: row.ID.String(), Metadata: agentPolicyAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	out := agentPolicyOf(row)
	return &out, nil
}

// AgentPoliciesUpdate replaces the whole policy with the body (PUT), under the rules of creation.
func (h *AgentPolicies) AgentPoliciesUpdate(ctx context.Context, req *api.AgentPolicy, params api.AgentPoliciesUpdateParams) (*api.AgentPolicy, error) {
	_, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return nil, err
	}
	var row dbq.AgentPolicy
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if row, err = policy.Replace(ctx, tx, org, params.ID, policyInput(req), h.now()); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "agent_policy.updated", EntityType: audit.EntityAgentPolicy,
			EntityID: row.ID.String(), Metadata: agentPolicyAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	out := agentPolicyOf(row)
	return &out, nil
}

// AgentPoliciesDelete removes a policy: its credential's gated actions wait for approvals again.
func (h *AgentPolicies) AgentPoliciesDelete(ctx context.Context, params api.AgentPoliciesDeleteParams) error {
	_, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := policy.Delete(ctx, tx, org, params.ID); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "agent_policy.deleted", EntityType: audit.EntityAgentPolicy,
			EntityID: params.ID.String()})
	})
}

// AgentPoliciesGetEffective answers the enabled policy of the calling API key or OAuth grant; a session, or a
// credential without one, is 404 agent_policy_not_found saying what that means (policy.Effective).
func (h *AgentPolicies) AgentPoliciesGetEffective(ctx context.Context) (*api.AgentPolicy, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.AgentPolicy
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = policy.Effective(ctx, tx, auth.PrincipalFrom(ctx))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := agentPolicyOf(row)
	return &out, nil
}

// policyInput maps a create or replace body; enabled defaults to true.
func policyInput(req *api.AgentPolicy) policy.Input {
	in := policy.Input{Name: req.Name, Enabled: req.Enabled.Or(true), APIKeyID: req.APIKeyID.Or(uuid.Nil), OAuthGrantID: req.OAuthGrantID.Or(uuid.Nil),
		MailboxIDs: req.MailboxIds, MaxRecipientsPerRun: req.MaxRecipientsPerRun, MaxRecipientsPerDay: req.MaxRecipientsPerDay,
		MaxActionsPerDay: req.MaxActionsPerDay, ExpiresAt: req.ExpiresAt}
	for _, c := range req.Capabilities {
		in.Capabilities = append(in.Capabilities, policy.Capability(c))
	}
	if v, ok := req.MaxMonthlyMailboxSpendCents.Get(); ok {
		cents := int64(v)
		in.MaxMonthlyMailboxSpendCents = &cents
	}
	return in
}

// agentPolicyOf maps a stored policy for the API.
func agentPolicyOf(r dbq.AgentPolicy) api.AgentPolicy {
	out := api.AgentPolicy{ID: api.NewOptUUID(r.ID), Name: r.Name, Enabled: api.NewOptBool(r.Enabled), MailboxIds: r.MailboxIds,
		MaxRecipientsPerRun: int(r.MaxRecipientsPerRun), MaxRecipientsPerDay: int(r.MaxRecipientsPerDay),
		MaxActionsPerDay: int(r.MaxActionsPerDay), ExpiresAt: r.ExpiresAt,
		Capabilities: make([]api.AgentPolicyCapabilitiesItem, len(r.Capabilities))}
	if r.ApiKeyID.Valid {
		out.APIKeyID = api.NewOptUUID(r.ApiKeyID.UUID)
	}
	if r.OauthGrantID.Valid {
		out.OAuthGrantID = api.NewOptUUID(r.OauthGrantID.UUID)
	}
	for i, c := range r.Capabilities {
		out.Capabilities[i] = api.AgentPolicyCapabilitiesItem(c)
	}
	if r.MaxMonthlyMailboxSpendCents.Valid {
		out.MaxMonthlyMailboxSpendCents = api.NewOptInt(int(r.MaxMonthlyMailboxSpendCents.Int64))
	}
	return out
}

// agentPolicyAudit is what the audit log keeps of a policy: its bounds, and which credential it governs
// (named so the secret scrubber, which hides keys containing "api_key", keeps the ids).
func agentPolicyAudit(r dbq.AgentPolicy) map[string]any {
	m := map[string]any{"name": r.Name, "enabled": r.Enabled, "capabilities": r.Capabilities, "mailbox_ids": r.MailboxIds,
		"max_recipients_per_run": r.MaxRecipientsPerRun, "max_recipients_per_day": r.MaxRecipientsPerDay,
		"max_actions_per_day": r.MaxActionsPerDay, "expires_at": r.ExpiresAt}
	if r.ApiKeyID.Valid {
		m["governs"] = map[string]any{"kind": "key", "id": r.ApiKeyID.UUID}
	} else {
		m["governs"] = map[string]any{"kind": "oauth", "id": r.OauthGrantID.UUID}
	}
	if r.MaxMonthlyMailboxSpendCents.Valid {
		m["max_monthly_mailbox_spend_cents"] = r.MaxMonthlyMailboxSpendCents.Int64
	}
	return m
}
