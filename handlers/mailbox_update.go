package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // mailbox time zones are validated by name, whatever the host's zoneinfo holds
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// MailboxesUpdate applies any subset of the mailbox's settings, each validated, in one transaction.
func (h *Mailboxes) MailboxesUpdate(ctx context.Context, req *api.MailboxUpdate, params api.MailboxesUpdateParams) (*api.Mailbox, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.Mailbox
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.MailboxGetForUpdate(ctx, tx, dbq.MailboxGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		next, changes, err := h.merge(ctx, tx, cur, req)
		if err != nil {
			return err
		}
		row, err = h.queries.MailboxUpdate(ctx, tx, next)
		if err != nil {
			return db.Classify(err, "Mailbox")
		}
		if row.Status != cur.Status {
			kind := events.MailboxDisconnected
			if row.Status == "active" {
				kind = events.MailboxConnected
			}
			if _, err := h.outbox.Emit(ctx, tx, kind, mailboxEvent(row)); err != nil {
				return err
			}
		}
		meta := mailboxAudit(row)
		meta["changed"] = changes
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "mailbox.updated", EntityType: audit.EntityEmailAccount,
			EntityID: row.ID.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	out := mailboxOf(row)
	return &out, nil
}

// merge validates a PATCH body against the stored mailbox and answers the row to write and the names of the
// fields sent.
func (h *Mailboxes) merge(ctx context.Context, tx pgx.Tx, cur dbq.Mailbox, req *api.MailboxUpdate) (dbq.MailboxUpdateParams, []string, error) {
	p := dbq.MailboxUpdateParams{
		OrganizationID: cur.OrganizationID, ID: cur.ID, Name: cur.Name, SignaturePlain: cur.SignaturePlain,
		SignatureHtml: cur.SignatureHtml, SignatureSync: cur.SignatureSync, SignatureCode: cur.SignatureCode,
		SendAsEmail: cur.SendAsEmail, Status: cur.Status, CampaignLimit: cur.CampaignLimit, MinWaitTime: cur.MinWaitTime,
		ReplyTo: cur.ReplyTo, SaveToSent: cur.SaveToSent, Timezone: cur.Timezone, Tags: cur.Tags, Warmup: cur.Warmup,
		WarmupPausedAt: cur.WarmupPausedAt, WarmupBase: cur.WarmupBase, WarmupMax: cur.WarmupMax,
		WarmupIncrease: cur.WarmupIncrease, WarmupReplyRate: cur.WarmupReplyRate, WarmupTag: cur.WarmupTag,
		WarmupStartTime: cur.WarmupStartTime, WarmupEndTime: cur.WarmupEndTime, WarmupDays: cur.WarmupDays,
	}
	var changed []string
	text := func(name string, v api.OptString, max int, dst *string) error {
		if !v.Set {
			return nil
		}
		changed = append(changed, name)
		if utf8.RuneCountInString(v.Value) > max {
			return apierror.BadRequest("invalid_"+name, fmt.Sprintf("%s must be at most %d characters.", name, max))
		}
		*dst = v.Value
		return nil
	}
	number := func(name string, v api.OptInt, lo, hi int, dst *int32) error {
		if !v.Set {
			return nil
		}
		changed = append(changed, name)
		if v.Value < lo || v.Value > hi {
			return apierror.BadRequest("invalid_"+name, fmt.Sprintf("%s must be between %d and %d.", name, lo, hi))
		}
		*dst = int32(v.Value)
		return nil
	}
	flag := func(name string, v api.OptBool, dst *bool) {
		if v.Set {
			changed = append(changed, name)
			*dst = v.Value
		}
	}
	if req.Name.Set {
		req.Name.Value = strings.TrimSpace(req.Name.Value)
	}
	for _, err := range []error{
		text("name", req.Name, maxMailboxName, &p.Name),
		text("signature_plain", req.SignaturePlain, maxMailboxSignature, &p.SignaturePlain),
		text("signature_html", req.SignatureHTML, maxMailboxSignature, &p.SignatureHtml),
		text("warmup_tag", req.WarmupTag, maxWarmupTag, &p.WarmupTag),
		number("campaign_limit", req.CampaignLimit, 0, 5000, &p.CampaignLimit),
		number("min_wait_time", req.MinWaitTime, 0, maxMinWaitTime, &p.MinWaitTime),
		number("warmup_base", req.WarmupBase, 1, 100, &p.WarmupBase),
		number("warmup_max", req.WarmupMax, 1, 200, &p.WarmupMax),
		number("warmup_increase", req.WarmupIncrease, 0, 50, &p.WarmupIncrease),
		number("warmup_reply_rate", req.WarmupReplyRate, 0, 100, &p.WarmupReplyRate),
		number("warmup_days", req.WarmupDays, 1, 7, &p.WarmupDays),
	} {
		if err != nil {
			return p, nil, err
		}
	}
	flag("signature_sync", req.SignatureSync, &p.SignatureSync)
	flag("signature_code", req.SignatureCode, &p.SignatureCode)
	flag("save_to_sent", req.SaveToSent, &p.SaveToSent)
	if p.WarmupBase > p.WarmupMax {
		return p, nil, apierror.BadRequest("invalid_warmup_base", "warmup_base must not be above warmup_max.")
	}
	for _, t := range []struct {
		name string
		v    api.OptString
		dst  *string
	}{{"warmup_start_time", req.WarmupStartTime, &p.WarmupStartTime}, {"warmup_end_time", req.WarmupEndTime, &p.WarmupEndTime}} {
		if !t.v.Set {
			continue
		}
		changed = append(changed, t.name)
		if t.v.Value != "" && !warmupHours.MatchString(t.v.Value) {
			return p, nil, apierror.BadRequest("invalid_"+t.name, t.name+" must be a time of day as HH:MM (00:00 to 23:59), or empty.")
		}
		*t.dst = t.v.Value
	}
	if req.Status.Set {
		changed = append(changed, "status")
		p.Status = string(req.Status.Value)
	}
	if req.ReplyTo.Set {
		changed = append(changed, "reply_to")
		p.ReplyTo = ""
		if v := strings.TrimSpace(req.ReplyTo.Value); v != "" {
			addr, ok := contacts.NormalizeEmail(v)
			if !ok {
				return p, nil, apierror.BadRequest("invalid_reply_to", "reply_to must be one address, or empty to clear it.")
			}
			p.ReplyTo = addr
		}
	}
	if req.Timezone.Set {
		changed = append(changed, "timezone")
		tz := strings.TrimSpace(req.Timezone.Value)
		if tz != "" {
			if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
				return p, nil, apierror.BadRequest("invalid_timezone", "timezone must be an IANA zone name such as Europe/Berlin, or empty to clear it.")
			}
		}
		p.Timezone = tz
	}
	if req.SendAsEmail.Set {
		changed = append(changed, "send_as_email")
		v, err := sendAsChoice(cur, req.SendAsEmail.Value)
		if err != nil {
			return p, nil, err
		}
		p.SendAsEmail = v
	}
	if req.Tags != nil {
		changed = append(changed, "tags")
		tags, err := h.mailboxTags(ctx, tx, cur.OrganizationID, req.Tags)
		if err != nil {
			return p, nil, err
		}
		p.Tags = tags
	}
	if req.Warmup.Set {
		changed = append(changed, "warmup")
		anchor, paused := nextWarmup(cur, req.Warmup.Value, h.now())
		p.Warmup, p.WarmupPausedAt = anchor, paused
	}
	return p, changed, nil
}

// sendAsChoice checks a send-as address: empty resets to the mailbox's own address, which is always allowed;
// anything else must be an alias the provider reported verified (only Google exposes them).
func sendAsChoice(cur dbq.Mailbox, raw string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(raw))
	if v == "" || v == cur.Email {
		return "", nil
	}
	var identities []identityJSON
	if err := json.Unmarshal(cur.Identities, &identities); err != nil {
		return "", err
	}
	for _, id := range identities {
		if id.Verified && strings.EqualFold(id.Email, v) {
			return v, nil
		}
	}
	return "", apierror.BadRequest("mailbox_send_as_unknown", v+" is not a send-as address the provider has verified for this mailbox.").
		WithFix("Refresh the identity with POST /emails/{id}/identity/refresh, then pick one of its verified addresses (Google mailboxes only).")
}

// mailboxTags checks a tag id list: at most 50 distinct ids, each a tag of the organization.
func (h *Mailboxes) mailboxTags(ctx context.Context, tx pgx.Tx, org uuid.UUID, raw []string) ([]uuid.UUID, error) {
	tags := make([]uuid.UUID, 0, len(raw))
	for _, s := range raw {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, apierror.BadRequest("invalid_tags", "tags must be tag ids (uuids); "+fmt.Sprintf("%q", s)+" is not one.")
		}
		if !slices.Contains(tags, id) {
			tags = append(tags, id)
		}
	}
	if len(tags) > maxMailboxTags {
		return nil, apierror.BadRequest("invalid_tags", fmt.Sprintf("A mailbox carries at most %d tags.", maxMailboxTags))
	}
	known, err := h.queries.MailboxTagsKnown(ctx, tx, dbq.MailboxTagsKnownParams{OrganizationID: org, Ids: tags})
	if err != nil {
		return nil, err
	}
	if int(known) != len(tags) {
		return nil, apierror.BadRequest("unknown_tags", "Some tags are not tags of this organization.").
			WithFix("GET /tags lists the organization's tags.")
	}
	return tags, nil
}

// nextWarmup is the warmup anchor and pause time after turning warmup on or off at now. On: a disabled
// warmup starts a fresh ramp, a paused one resumes with its anchor shifted by the time spent paused, a running
// one is unchanged. Off: both cleared, so the ramp's progress is gone.
func nextWarmup(cur dbq.Mailbox, on bool, now time.Time) (anchor, paused *time.Time) {
	switch {
	case !on:
		return nil, nil
	case cur.Warmup == nil:
		return &now, nil
	case cur.WarmupPausedAt != nil:
		shifted := cur.Warmup.Add(now.Sub(*cur.WarmupPausedAt))
		return &shifted, nil
	}
	return cur.Warmup, nil
}
