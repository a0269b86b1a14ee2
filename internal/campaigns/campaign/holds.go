package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// A lead's hold stops its flow in one campaign without moving it: its state and step stay, and the status the
// API shows is paused while the hold lasts (contacts.LeadStatusSQL reads hold_since). A waiting lead is due
// again when the hold ends, never while it is open, so the engine takes it back then and lifts the hold; a
// resume lifts it at once.

// Sources of a hold (part 2): set by hand, by an out-of-office reply, or by a negative reply when the
// campaign pauses leads on them (auto_pause_on_negative); the last two by the inbox's hook.
const (
	HoldManual        = "manual"
	HoldOutOfOffice   = "out_of_office"
	HoldNegativeReply = "negative_reply"
)

// MaxHoldReason is the longest reason a hold keeps, in characters.
const MaxHoldReason = 200

// Hold is a held lead's hold: since when, until when (nil: until resumed), why and by what.
type Hold struct {
	Since  time.Time
	Until  *time.Time
	Reason string
	Source string
}

// LeadNotFound answers a contact that is not a lead of the campaign, an unknown campaign and a foreign one alike.
func LeadNotFound() error {
	return apierror.NotFound("lead_not_found", "This contact is not a lead of this campaign.")
}

// holdOf reads the hold columns of a lead (nil when it is not held).
func holdOf(since, until *time.Time, reason string, source *string) *Hold {
	if since == nil {
		return nil
	}
	h := &Hold{Since: *since, Until: until, Reason: reason, Source: HoldManual}
	if source != nil {
		h.Source = *source
	}
	return h
}

// LeadHold reads a lead's hold: nil when the lead is not held, 404 lead_not_found when there is no such lead.
func LeadHold(ctx context.Context, tx pgx.Tx, org, campaign, contact uuid.UUID) (*Hold, error) {
	row, err := queries.CampaignLeadHoldGet(ctx, tx, dbq.CampaignLeadHoldGetParams{OrganizationID: org, CampaignID: campaign, ContactID: contact})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, LeadNotFound()
	}
	if err != nil {
		return nil, err
	}
	return holdOf(row.HoldSince, row.HoldUntil, row.HoldReason, row.HoldSource), nil
}

// PauseLead holds a lead by hand from now until until (nil: until resumed), replacing any hold it had. until
// must be in the future and reason at most MaxHoldReason characters on one line. The activity log and the
// audit log record it.
func (s *Store) PauseLead(ctx context.Context, tx pgx.Tx, org, campaign, contact uuid.UUID, until *time.Time, reason string) (*Hold, error) {
	now := s.now()
	if until != nil && !until.After(now) {
		return nil, invalid("until", "must be in the future, or null to hold the lead until it is resumed.")
	}
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) > MaxHoldReason || strings.ContainsFunc(reason, unicode.IsControl) {
		return nil, invalid("reason", fmt.Sprintf("must be at most %d characters on one line.", MaxHoldReason))
	}
	wait := "Held by hand until resumed."
	if until != nil {
		wait = "Held by hand until " + until.UTC().Format(time.RFC3339) + "."
	}
	// No step goes out while the lead is held: a send of it still queued is cancelled and its step waits for
	// the hold to end (a send already being handed over finishes).
	if _, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: org, CampaignID: uuid.NullUUID{UUID: campaign, Valid: true},
		ContactID: uuid.NullUUID{UUID: contact, Valid: true}, ErrorCode: "lead_paused",
		Reason: "The lead was paused before this message was sent."}); err != nil {
		return nil, err
	}
	row, err := queries.CampaignLeadHoldSet(ctx, tx, dbq.CampaignLeadHoldSetParams{Since: &now, Until: until, Reason: reason,
		Source: HoldManual, WaitReason: wait, OrganizationID: org, CampaignID: campaign, ContactID: contact})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, LeadNotFound()
	}
	if err != nil {
		return nil, err
	}
	meta := map[string]any{"contact_id": contact, "until": until, "reason": reason, "source": HoldManual}
	message := wait
	if reason != "" {
		message = strings.TrimSuffix(wait, ".") + ": " + reason
	}
	if err := s.leadLog(ctx, tx, org, campaign, contact, "lead_paused", message, "campaign.lead_paused", meta); err != nil {
		return nil, err
	}
	return holdOf(row.HoldSince, row.HoldUntil, row.HoldReason, row.HoldSource), nil
}

// ResumeLead lifts a lead's hold, whatever its source; a waiting lead is due at once. A lead that is not held
// is left as it is.
func (s *Store) ResumeLead(ctx context.Context, tx pgx.Tx, org, campaign, contact uuid.UUID) error {
	held, err := LeadHold(ctx, tx, org, campaign, contact)
	if err != nil || held == nil {
		return err
	}
	if err := queries.CampaignLeadHoldClear(ctx, tx, dbq.CampaignLeadHoldClearParams{Now: s.now(), OrganizationID: org,
		CampaignID: campaign, ContactID: contact}); err != nil {
		return err
	}
	meta := map[string]any{"contact_id": contact, "source": held.Source, "held_since": held.Since}
	message := fmt.Sprintf("Resumed by hand; held since %s (%s).", held.Since.UTC().Format(time.RFC3339), held.Source)
	return s.leadLog(ctx, tx, org, campaign, contact, "lead_resumed", message, "campaign.lead_resumed", meta)
}

// leadLog writes one lead's change to the campaign activity log and the audit log.
func (s *Store) leadLog(ctx context.Context, tx pgx.Tx, org, campaign, contact uuid.UUID, logType, message, event string, meta map[string]any) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	if err := Log(ctx, tx, org, campaign, uuid.NullUUID{UUID: contact, Valid: true}, logType, message, raw); err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: event, EntityType: audit.EntityCampaign,
		EntityID: campaign.String(), Metadata: meta})
}

// Wait is why a lead's next step has not gone out yet and when the engine looks at it next.
type Wait struct {
	Reason string
	// Next is nil when the lead has finished, is held until resumed, or has a step being sent.
	Next *time.Time
	// Sending reports a step handed to the send pipeline whose result is not in yet.
	Sending bool
}

// LeadWait reads a lead's wait; 404 lead_not_found when there is no such lead.
func LeadWait(ctx context.Context, tx pgx.Tx, org, campaign, contact uuid.UUID) (Wait, error) {
	row, err := queries.CampaignLeadWait(ctx, tx, dbq.CampaignLeadWaitParams{OrganizationID: org, CampaignID: campaign, ContactID: contact})
	if errors.Is(err, pgx.ErrNoRows) {
		return Wait{}, LeadNotFound()
	}
	if err != nil {
		return Wait{}, err
	}
	w := Wait{Reason: row.WaitReason, Next: row.DueAt, Sending: row.Sending}
	if w.Next != nil {
		if until, ok := ParkCovers(row.ParkedBefore, row.ParkedUntil, *w.Next); ok {
			// The campaign cannot send before the park ends; the engine looks at the lead again then.
			w.Reason, w.Next = row.ParkedReason, &until
		}
	}
	return w, nil
}

// ParkCovers reports whether a campaign's park (parked_before, parked_until) holds a lead due at due, and
// until when: a lead due at or before parked_before waits for parked_until when that is later than its own
// due time. The lead hold and the engine read a lead's effective wait by this one rule.
func ParkCovers(before, until *time.Time, due time.Time) (time.Time, bool) {
	if before == nil || until == nil || due.After(*before) || !until.After(due) {
		return time.Time{}, false
	}
	return *until, true
}
