package handlers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// agentLaunch holds an API key's or OAuth grant's start of campaign id (POST /campaigns/{id}/start, or a
// PATCH to active) to service-wide rule 2: a credential launches outbound mail only under an agent policy
// granting campaign.launch for every mailbox the campaign can send from, within its recipient and daily
// limits, counted in tx with the start. A session is a person and is never held. The refusal says why and
// points at POST /runs, the launch a person can approve. was is the campaign's status before the change:
// starting an active campaign launches nothing and counts nothing.
func (h *Campaigns) agentLaunch(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, was string, now time.Time) error {
	p := auth.PrincipalFrom(ctx)
	if was == campaign.StatusActive || (p != nil && p.Kind == auth.KindSession) {
		return nil
	}
	s, err := checks.Load(ctx, tx, org, id, now)
	if err != nil {
		return err
	}
	senders := s.Senders()
	recipients, err := h.store.PendingLeads(ctx, tx, org, id)
	if err != nil {
		return err
	}
	d, err := policy.Check(ctx, tx, p, policy.Action{Capability: policy.CampaignLaunch, Mailboxes: senders, Recipients: recipients}, now)
	if err != nil || d.Allowed {
		return err
	}
	return apierror.Forbidden("agent_policy_required", fmt.Sprintf("An API key or OAuth app starts a campaign only under an agent policy "+
		"that allows campaign.launch (%d recipient(s) from %d mailbox(es)): %s Ask a person to start it, or launch it with "+
		"POST /v1/runs {\"campaign_id\": %q}, which holds it for a person's approval.", recipients, len(senders), strings.Join(d.Reasons, " "), id))
}
