package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

var queries = dbq.New()

// Load reads the snapshot the checks need about campaign id of org at now, in the caller's
// organization-scoped transaction: the campaign with its tags, its steps and variants, the mailboxes its
// sender strategy names, its preflight block and, only when a template needs them, the custom-field keys on
// the organization's contacts. An unknown campaign is 404 campaign_not_found.
func Load(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, now time.Time) (Snapshot, error) {
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Snapshot{}, campaign.NotFound()
	}
	if err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{Campaign: campaign.Campaign{Campaign: row, EmailTags: []uuid.UUID{}}, Now: now}
	labels, err := queries.CampaignLabelsOf(ctx, tx, dbq.CampaignLabelsOfParams{OrganizationID: org, CampaignIds: []uuid.UUID{id}})
	if err != nil {
		return Snapshot{}, err
	}
	for _, l := range labels {
		if l.Kind == "tag" {
			s.Campaign.EmailTags = append(s.Campaign.EmailTags, l.LabelID)
		}
	}
	if s.Steps, err = campaign.Steps(ctx, tx, org, id); err != nil {
		return Snapshot{}, err
	}
	variants, err := queries.CampaignChecksVariants(ctx, tx, dbq.CampaignChecksVariantsParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return Snapshot{}, err
	}
	for _, v := range variants {
		s.Variants = append(s.Variants, Variant{ID: v.ID, StepID: v.StepID, Name: v.Name, Weight: v.Weight, Subject: v.Subject,
			BodyPlain: v.BodyPlain, BodyHTML: v.BodyHtml, IsControl: v.IsControl, IsActive: v.IsActive})
	}
	if s.Pool, err = pool(ctx, tx, s.Campaign); err != nil {
		return Snapshot{}, err
	}
	advanced, err := campaign.Advanced(campaign.Campaign{Campaign: row})
	if err != nil {
		return Snapshot{}, err
	}
	s.Preflight = advanced.Preflight
	if needsCustomKeys(s) {
		if s.CustomFieldKeys, err = queries.CampaignChecksCustomFieldKeys(ctx, tx, org); err != nil {
			return Snapshot{}, err
		}
	}
	return s, nil
}

// pool reads the mailboxes c's sender strategy names: the explicit senders and tagged mailboxes, or with the
// tags strategy and neither of them, every mailbox of the organization (the spec's sender_strategy).
func pool(ctx context.Context, tx pgx.Tx, c campaign.Campaign) ([]Mailbox, error) {
	senders, err := queries.CampaignSendersOf(ctx, tx, dbq.CampaignSendersOfParams{OrganizationID: c.OrganizationID, CampaignID: c.ID})
	if err != nil {
		return nil, err
	}
	rows, err := queries.CampaignChecksPool(ctx, tx, dbq.CampaignChecksPoolParams{OrganizationID: c.OrganizationID, CampaignID: c.ID,
		TagIds: c.EmailTags, EveryMailbox: c.SenderStrategy == campaign.StrategyTags && len(senders) == 0 && len(c.EmailTags) == 0})
	if err != nil {
		return nil, err
	}
	out := make([]Mailbox, len(rows))
	for i, r := range rows {
		out[i] = Mailbox{ID: r.ID, Email: r.Email, Active: r.Active, Enabled: r.Enabled, DailyCap: r.CampaignLimit}
	}
	return out, nil
}

// Stored is a preflight report as kept in campaign_preflight_reports.
type Stored struct {
	Report
	ID, OrganizationID, CampaignID uuid.UUID
	CreatedAt                      time.Time
}

// checkJSON is how a report line is stored (and shown): the API's field names.
type checkJSON struct {
	Key         string   `json:"key"`
	Passed      bool     `json:"passed"`
	Severity    Severity `json:"severity"`
	Message     string   `json:"message"`
	Remediation string   `json:"remediation"`
}

// RunPreflight runs preflight on campaign id of org at now (Load, then Evaluate), stores the report, records
// the audit entry (verify, campaign.preflight) and writes the campaign activity log, all in the caller's
// transaction so a report is never kept without its trail.
func RunPreflight(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, now time.Time) (Stored, error) {
	s, err := Load(ctx, tx, org, id, now)
	if err != nil {
		return Stored{}, err
	}
	r := Evaluate(s)
	lines := make([]checkJSON, len(r.Checks))
	var failed []string
	for i, c := range r.Checks {
		lines[i] = checkJSON(c)
		if !c.Passed {
			failed = append(failed, c.Key)
		}
	}
	checks, err := json.Marshal(lines)
	if err != nil {
		return Stored{}, err
	}
	recs, err := json.Marshal(r.Recommendations)
	if err != nil {
		return Stored{}, err
	}
	reportID, err := uuid.NewV7()
	if err != nil {
		return Stored{}, err
	}
	row, err := queries.CampaignPreflightReportInsert(ctx, tx, dbq.CampaignPreflightReportInsertParams{OrganizationID: org,
		CampaignID: id, ID: reportID, Passed: r.Passed, Score: int32(r.Score), Checks: checks, Recommendations: recs})
	if err != nil {
		return Stored{}, err
	}
	meta := map[string]any{"report_id": reportID, "passed": r.Passed, "score": r.Score, "failed_checks": failed}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionVerify, Event: "campaign.preflight",
		EntityType: audit.EntityCampaign, EntityID: id.String(), Metadata: meta}); err != nil {
		return Stored{}, err
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return Stored{}, err
	}
	verdict := "passed"
	switch {
	case !r.Passed:
		verdict = "failed with " + plural(len(failed), "problem", "problems")
	case len(failed) > 0:
		verdict = "passed with " + plural(len(failed), "warning", "warnings")
	}
	if err := campaign.Log(ctx, tx, org, id, uuid.NullUUID{}, "preflight",
		fmt.Sprintf("Preflight %s; content score %d.", verdict, r.Score), raw); err != nil {
		return Stored{}, err
	}
	return Stored{Report: r, ID: row.ID, OrganizationID: org, CampaignID: id, CreatedAt: row.CreatedAt}, nil
}
