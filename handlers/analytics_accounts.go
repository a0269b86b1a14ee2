package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// AnalyticsAccounts serves the account analytics: every mailbox's status and one mailbox's with its warmup
// standing. Package accounts computes them; this side authorizes and maps.
type AnalyticsAccounts struct {
	pool  *pgxpool.Pool
	grace time.Duration
	now   func() time.Time
}

// NewAnalyticsAccounts builds the account analytics over the application pool; grace is the deployment's
// domain-authentication grace (OUTFLOW_DOMAIN_AUTH_GRACE) the health rules apply, now the process clock.
func NewAnalyticsAccounts(pool *pgxpool.Pool, grace time.Duration, now func() time.Time) *AnalyticsAccounts {
	return &AnalyticsAccounts{pool: pool, grace: grace, now: now}
}

// AnalyticsAccountsList answers the status of every mailbox the caller may see (a mailbox-scoped key only its
// own), newest first. Any status that cannot be computed fails the whole call.
func (h *AnalyticsAccounts) AnalyticsAccountsList(ctx context.Context) (*api.AccountStatusList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var rows []accounts.Status
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = accounts.List(ctx, tx, org, callerMailboxScope(ctx), h.grace, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.AccountStatusList{Data: make([]api.AccountStatus, len(rows))}
	for i, s := range rows {
		out.Data[i] = accountStatusOf(s)
	}
	return out, nil
}

// AnalyticsAccountGet answers one mailbox's status with its warmup standing (the route admits a
// mailbox-scoped key only for its own mailboxes).
func (h *AnalyticsAccounts) AnalyticsAccountGet(ctx context.Context, params api.AnalyticsAccountGetParams) (*api.AccountStatusDetail, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var s accounts.Status
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		s, err = accounts.Get(ctx, tx, org, params.ID, h.grace, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	a := accountStatusOf(s)
	out := &api.AccountStatusDetail{ID: a.ID, Email: a.Email, Provider: a.Provider, Status: a.Status, LastSyncedAt: a.LastSyncedAt,
		Health: a.Health, Errors: a.Errors, DailyUsage: a.DailyUsage, InCampaign: a.InCampaign}
	if w := s.Warmup; w != nil {
		out.WarmupStatus = api.NewOptWarmupStatus(api.WarmupStatus{Enabled: api.NewOptBool(w.Enabled), Paused: api.NewOptBool(w.Paused),
			StartedAt: optNilTime(w.StartedAt), CurrentVolume: api.NewOptInt(w.CurrentVolume), TargetVolume: api.NewOptInt(w.TargetVolume),
			MaxVolume: api.NewOptInt(w.MaxVolume), ReplyRate: api.NewOptFloat64(w.ReplyRate), DaysActive: api.NewOptInt(w.DaysActive)})
	}
	if wh := s.WarmupHealth; wh != nil {
		health := api.WarmupHealth{State: api.NewOptWarmupHealthState(api.WarmupHealthState(wh.State)), Score: api.NewOptInt(wh.Score),
			EvaluatedAt: api.NewOptDateTime(wh.EvaluatedAt)}
		//lint:ignore SA1019 spam_score stays filled for clients of the reference that still read it
		health.SpamScore = api.NewOptInt(wh.SpamScore)
		out.WarmupHealth = api.NewOptWarmupHealth(health)
	}
	return out, nil
}

// callerMailboxScope is the mailbox scope of the caller: nil for every mailbox of the organization, else a
// mailbox-scoped key's own mailboxes.
func callerMailboxScope(ctx context.Context) []uuid.UUID {
	if p := auth.PrincipalFrom(ctx); p != nil && p.AllowedMailboxes != nil {
		return append([]uuid.UUID{}, p.AllowedMailboxes...)
	}
	return nil
}

func accountStatusOf(s accounts.Status) api.AccountStatus {
	m := s.Mailbox
	out := api.AccountStatus{ID: m.ID, Email: m.Email, Provider: m.Provider, Status: m.Status, LastSyncedAt: optNilTime(m.LastSyncedAt),
		Health: api.AccountHealth{Status: api.NewOptString(s.Health.Status), Score: api.NewOptInt(s.Health.Score), Issues: s.Health.Issues},
		Errors: make([]api.AccountError, len(s.Errors)), InCampaign: api.NewOptBool(s.InCampaign),
		DailyUsage: api.AccountDailyUsage{Date: api.NewOptDate(s.Usage.Date), CampaignSent: api.NewOptInt(s.Usage.CampaignSent),
			CampaignLimit: api.NewOptInt(s.Usage.CampaignLimit), WarmupSent: api.NewOptInt(s.Usage.WarmupSent),
			WarmupLimit: api.NewOptInt(s.Usage.WarmupLimit)}}
	for i, e := range s.Errors {
		out.Errors[i] = api.AccountError{ID: api.NewOptUUID(e.ID), ErrorCode: api.NewOptString(e.Code), Severity: api.NewOptString(e.Severity),
			Title: api.NewOptString(e.Title), Message: api.NewOptString(e.Message), CreatedAt: api.NewOptDateTime(e.CreatedAt)}
	}
	return out
}
