package campaign

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Statuses are the values PATCH /campaigns/:id may set.
var Statuses = []string{StatusDraft, StatusActive, StatusPaused, StatusPausedNoAccounts, StatusPausedTrialExpired, StatusCompleted}

// Paused reports whether status is one of the paused variants.
func Paused(status string) bool {
	return status == StatusPaused || status == StatusPausedNoAccounts || status == StatusPausedTrialExpired
}

// UpdateInput is what PATCH /campaigns/:id sends.
type UpdateInput struct {
	Patch              Patch
	Status             Field[string]
	EmailTags, Folders Field[[]uuid.UUID]
	// Segments, when sent, replaces the linked segments; the members of the new set become leads.
	Segments Field[[]uuid.UUID]
}

// Update applies a patch to a campaign, validating the whole result; a schedule change on an active
// campaign makes its waiting leads due at once, and a changed tracking domain needs verifying again.
func (s *Store) Update(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, in UpdateInput) (Campaign, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	cur, err := s.withLabels(ctx, tx, org, []dbq.Campaign{row})
	if err != nil {
		return Campaign{}, err
	}
	c := cur[0]
	if in.Patch.Kind.Set && in.Patch.Kind.Value != c.Kind {
		return Campaign{}, invalid("kind", "is fixed at creation.")
	}
	tags := c.EmailTags
	in.EmailTags.apply(&tags)
	senders, err := queries.CampaignSendersOf(ctx, tx, dbq.CampaignSendersOfParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return Campaign{}, err
	}
	senderIDs := make([]uuid.UUID, len(senders))
	for i, x := range senders {
		senderIDs[i] = x.MailboxID
	}
	next := in.Patch.Apply(c.Settings())
	capacity, err := poolCap(ctx, tx, org, next.SenderStrategy, senderIDs, tags)
	if err != nil {
		return Campaign{}, err
	}
	st, err := Normalize(next, Check{Now: s.now(), PrevStart: c.StartDate, PrevEnd: c.EndDate, MailboxCap: capacity})
	if err != nil {
		return Campaign{}, err
	}
	status := c.Status
	if in.Status.Set {
		if !slices.Contains(Statuses, in.Status.Value) {
			return Campaign{}, invalid("status", "must be one of "+strings.Join(Statuses, ", ")+".")
		}
		status = in.Status.Value
	}
	if in.EmailTags.Set {
		if err := setLabels(ctx, tx, org, id, "tag", "email_tags", in.EmailTags.Value); err != nil {
			return Campaign{}, err
		}
	}
	if in.Folders.Set {
		if err := setLabels(ctx, tx, org, id, "folder", "folders", in.Folders.Value); err != nil {
			return Campaign{}, err
		}
	}
	if in.Segments.Set {
		if err := setSegments(ctx, tx, org, id, in.Segments.Value); err != nil {
			return Campaign{}, err
		}
	}
	params := updateParams(c.Campaign, st)
	if st.TrackingDomain != c.TrackingDomain {
		params.TrackingDomainVerifiedAt = nil
	}
	moved := status != c.Status
	if moved {
		now := s.now()
		params.Status, params.LastStatusChangeAt = status, &now
		if status == StatusActive && c.StartedAt == nil {
			params.StartedAt = &now
		}
		if status == StatusCompleted {
			params.CompletedAt = &now
		}
	}
	if _, err := queries.CampaignUpdate(ctx, tx, params); err != nil {
		return Campaign{}, classify(err)
	}
	if moved && status != StatusActive {
		// Whatever stops a campaign stops its queued sends, as Stop does.
		if _, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: org, CampaignID: uuid.NullUUID{UUID: id, Valid: true},
			ErrorCode: "campaign_" + status, Reason: "The campaign was set to " + status + " before this message was sent."}); err != nil {
			return Campaign{}, err
		}
	}
	if status == StatusActive && (in.Patch.Schedule() || moved) {
		if err := queries.CampaignLeadsSchedule(ctx, tx, dbq.CampaignLeadsScheduleParams{OrganizationID: org, CampaignID: id}); err != nil {
			return Campaign{}, err
		}
	}
	out, err := s.Get(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if err := s.raise(ctx, tx, out, events.CampaignUpdated, audit.ActionUpdate, map[string]any{"fields": in.fields()}); err != nil {
		return Campaign{}, err
	}
	if moved {
		return out, s.moved(ctx, tx, out, c.Status, "status set by PATCH")
	}
	return out, nil
}

// fields names what an update sent, for the event and the audit entry.
func (in UpdateInput) fields() []string {
	var out []string
	if in.Status.Set {
		out = append(out, "status")
	}
	if in.EmailTags.Set {
		out = append(out, "email_tags")
	}
	if in.Folders.Set {
		out = append(out, "folders")
	}
	if in.Segments.Set {
		out = append(out, "segment_ids")
	}
	return append(out, in.Patch.names()...)
}

// moved raises the lifecycle event of a status change and writes it to the activity log.
func (s *Store) moved(ctx context.Context, tx pgx.Tx, c Campaign, from, why string) error {
	if t := lifecycleEvent(c.Status); t != "" {
		if _, err := s.outbox.Emit(ctx, tx, t, map[string]any{"campaign_id": c.ID, "name": c.Name, "status": c.Status,
			"previous_status": from, "reason": why}); err != nil {
			return err
		}
	}
	return Log(ctx, tx, c.OrganizationID, c.ID, uuid.NullUUID{}, "status_changed",
		fmt.Sprintf("Status changed from %s to %s (%s).", from, c.Status, why), nil)
}

// lifecycleEvent is the event a campaign's move into status raises ("" for none).
func lifecycleEvent(status string) events.Type {
	switch {
	case status == StatusActive:
		return events.CampaignStarted
	case Paused(status):
		return events.CampaignPaused
	case status == StatusCompleted:
		return events.CampaignCompleted
	}
	return ""
}

func updateParams(c dbq.Campaign, st Settings) dbq.CampaignUpdateParams {
	return dbq.CampaignUpdateParams{
		OrganizationID: c.OrganizationID, ID: c.ID, Name: st.Name, Description: st.Description, Status: c.Status,
		StopOnReply: st.StopOnReply, OpenTracking: st.OpenTracking, LinkTracking: st.LinkTracking,
		TextOnly: st.TextOnly, UnsubscribeHeader: st.UnsubscribeHeader, RiskyEmails: st.RiskyEmails,
		DailyLimit: st.DailyLimit, Cc: st.Cc, Bcc: st.Bcc, StartDate: st.StartDate, EndDate: st.EndDate,
		Timezone: st.Timezone, Days: st.Days, StartTime: st.StartTime, EndTime: st.EndTime,
		ScheduleWindows: windowsJSON(st.ScheduleWindows), ContactOrderBy: st.ContactOrderBy,
		ContactOrderDir: st.ContactOrderDir, ContactOrderField: st.ContactOrderField,
		SenderStrategy: st.SenderStrategy, RotationMode: st.RotationMode, RampEnabled: st.RampEnabled,
		RampStart: st.RampStart, RampIncrement: st.RampIncrement, RampCeiling: st.RampCeiling,
		EspMatchMode: st.EspMatchMode, MaxNewLeadsPerDay: st.MaxNewLeadsPerDay,
		PrioritizeNewLeads: st.PrioritizeNewLeads, EntryDelayMinutes: st.EntryDelayMinutes,
		Continuous: st.Continuous, IdleSince: c.IdleSince, TrackingDomain: st.TrackingDomain,
		TrackingDomainVerifiedAt: c.TrackingDomainVerifiedAt, UtmTracking: st.UtmTracking, UtmSource: st.UtmSource,
		UtmMedium: st.UtmMedium, UtmCampaign: st.UtmCampaign, StartedAt: c.StartedAt, CompletedAt: c.CompletedAt,
		PausedReason: c.PausedReason, LastStatusChangeAt: c.LastStatusChangeAt,
	}
}

// Delete removes a campaign without pausing it first: its queued send tasks are cancelled and deal links
// cleared in the same transaction; steps, leads, logs, senders, variants, counters, reports and attachment
// files go with it (foreign keys); contacts, sent mail, suppressions and tracked links stay.
func (s *Store) Delete(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) error {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return err
	}
	canceled, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: org, CampaignID: uuid.NullUUID{UUID: id, Valid: true},
		ErrorCode: "campaign_deleted", Reason: "The campaign was deleted before this message was sent."})
	if err != nil {
		return err
	}
	if err := queries.CampaignDealsUnlink(ctx, tx, dbq.CampaignDealsUnlinkParams{OrganizationID: org, CampaignID: uuid.NullUUID{UUID: id, Valid: true}}); err != nil {
		return err
	}
	if _, err := queries.CampaignDelete(ctx, tx, dbq.CampaignDeleteParams{OrganizationID: org, ID: id}); err != nil {
		return err
	}
	return s.raise(ctx, tx, Campaign{Campaign: row}, events.CampaignDeleted, audit.ActionDelete, map[string]any{"canceled_tasks": canceled})
}

// Duplicate copies a campaign as a new draft: settings, steps (conditions follow the new step ids), labels,
// senders, segment links (whose members the copy enrolls, as any linked campaign does), variants, advanced
// blocks and attachments; not leads, progress, statistics, logs, counters, tasks,
// ramp level, auto-pause state or a start or end date already past. name, when given, must be 3 to 50
// characters; otherwise the copy is the source's name with " (copy)".
func (s *Store) Duplicate(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, name *string, user uuid.NullUUID) (Campaign, error) {
	src, err := s.Get(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	st := src.Settings()
	if name != nil {
		v := strings.TrimSpace(*name)
		if n := utf8.RuneCountInString(v); n < 3 || n > 50 {
			return Campaign{}, invalid("name", "of a copy must be 3 to 50 characters.")
		}
		st.Name = v
	} else {
		st.Name = copyName(src.Name)
	}
	now := s.now()
	if st.StartDate != nil && st.StartDate.Before(now) {
		st.StartDate = nil
	}
	if st.EndDate != nil && !st.EndDate.After(now) {
		st.EndDate = nil
	}
	if err := s.throttle(ctx, tx, org); err != nil {
		return Campaign{}, err
	}
	newID, err := uuid.NewV7()
	if err != nil {
		return Campaign{}, err
	}
	if _, err := insert(ctx, tx, org, newID, user, st, src.Advanced, src.AdvancedUpdatedAt); err != nil {
		return Campaign{}, err
	}
	oldIDs, newIDs, err := copySteps(ctx, tx, org, id, newID)
	if err != nil {
		return Campaign{}, err
	}
	pair := dbq.CampaignLabelsCopyParams{OrganizationID: org, CampaignID: id, NewCampaignID: newID}
	if err := queries.CampaignLabelsCopy(ctx, tx, pair); err != nil {
		return Campaign{}, err
	}
	if err := queries.CampaignSendersCopy(ctx, tx, dbq.CampaignSendersCopyParams(pair)); err != nil {
		return Campaign{}, err
	}
	if err := queries.CampaignSegmentsCopy(ctx, tx, dbq.CampaignSegmentsCopyParams(pair)); err != nil {
		return Campaign{}, err
	}
	if _, err := Enroll(ctx, tx, org, newID); err != nil {
		return Campaign{}, err
	}
	if err := queries.CampaignVariantsCopy(ctx, tx, dbq.CampaignVariantsCopyParams{OrganizationID: org, CampaignID: id,
		NewCampaignID: newID, OldIds: oldIDs, NewIds: newIDs}); err != nil {
		return Campaign{}, err
	}
	if err := queries.CampaignAttachmentsCopy(ctx, tx, dbq.CampaignAttachmentsCopyParams{OrganizationID: org, CampaignID: id,
		NewCampaignID: newID, OldIds: oldIDs, NewIds: newIDs}); err != nil {
		return Campaign{}, err
	}
	out, err := s.Get(ctx, tx, org, newID)
	if err != nil {
		return Campaign{}, err
	}
	return out, s.raise(ctx, tx, out, events.CampaignCreated, audit.ActionCreate, map[string]any{"duplicated_from": id})
}

func copyName(name string) string {
	const marker = " (copy)"
	r := []rune(name)
	if len(r)+utf8.RuneCountInString(marker) > MaxName {
		r = r[:MaxName-utf8.RuneCountInString(marker)]
	}
	return string(r) + marker
}

// copySteps copies a sequence under new ids, rewriting the old ids inside each step's conditions, and
// answers the id mapping.
func copySteps(ctx context.Context, tx pgx.Tx, org, from, to uuid.UUID) (oldIDs, newIDs []uuid.UUID, err error) {
	rows, err := queries.CampaignStepsOf(ctx, tx, dbq.CampaignStepsOfParams{OrganizationID: org, CampaignID: from})
	if err != nil {
		return nil, nil, err
	}
	steps := make([]Step, len(rows))
	for i, r := range rows {
		steps[i] = StepOf(r)
		oldIDs = append(oldIDs, r.ID)
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, err
		}
		newIDs = append(newIDs, id)
		steps[i].ID = id
	}
	for i := range steps {
		for j := range oldIDs {
			steps[i].Conditions = bytes.ReplaceAll(steps[i].Conditions, []byte(oldIDs[j].String()), []byte(newIDs[j].String()))
		}
	}
	return nonNilIDs(oldIDs), nonNilIDs(newIDs), insertSteps(ctx, tx, org, to, steps)
}

// StepOf reads a stored step.
func StepOf(r dbq.CampaignStep) Step {
	return Step{ID: r.ID, Position: r.Position, Name: r.Name, Subject: r.Subject, BodyPlain: r.BodyPlain,
		BodyHTML: r.BodyHtml, BodySync: r.BodySync, BodyCode: r.BodyCode, WaitAfter: r.WaitAfter,
		ThreadReply: r.ThreadReply, Kind: r.Kind, Conditions: r.Conditions, Action: r.Action, OnTimeout: r.OnTimeout,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Steps reads a campaign's sequence in order.
func Steps(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID) ([]Step, error) {
	rows, err := queries.CampaignStepsOf(ctx, tx, dbq.CampaignStepsOfParams{OrganizationID: org, CampaignID: campaign})
	if err != nil {
		return nil, err
	}
	out := make([]Step, len(rows))
	for i, r := range rows {
		out[i] = StepOf(r)
	}
	return out, nil
}

// Start moves a draft, paused or completed campaign to active. A campaign that is not continuous and never
// had a lead is refused (400 no_leads); one whose leads have all finished turns continuous and waits.
func (s *Store) Start(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Campaign, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if row.Status == StatusActive {
		return s.Get(ctx, tx, org, id)
	}
	if !row.Continuous && !row.HadLeads {
		return Campaign{}, apierror.BadRequest("no_leads", "This campaign has no leads: add contacts to it, or make it continuous to start it empty.")
	}
	steps, err := Steps(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if len(steps) == 0 {
		return Campaign{}, apierror.BadRequest("no_steps", "This campaign has no steps: add at least one email step before starting it.")
	}
	pending, err := queries.CampaignLeadsPending(ctx, tx, dbq.CampaignLeadsPendingParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return Campaign{}, err
	}
	now := s.now()
	params := updateParams(row, Campaign{Campaign: row}.Settings())
	params.Status, params.LastStatusChangeAt, params.PausedReason, params.CompletedAt = StatusActive, &now, "", nil
	if row.StartedAt == nil {
		params.StartedAt = &now
	}
	if !pending && row.HadLeads {
		params.Continuous, params.IdleSince = true, &now
	}
	if _, err := queries.CampaignUpdate(ctx, tx, params); err != nil {
		return Campaign{}, classify(err)
	}
	if err := queries.CampaignLeadsSchedule(ctx, tx, dbq.CampaignLeadsScheduleParams{OrganizationID: org, CampaignID: id}); err != nil {
		return Campaign{}, err
	}
	out, err := s.Get(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: string(events.CampaignStarted),
		EntityType: audit.EntityCampaign, EntityID: id.String(), Metadata: map[string]any{"from": row.Status}}); err != nil {
		return Campaign{}, err
	}
	return out, s.moved(ctx, tx, out, row.Status, "started")
}

// PendingLeads counts the campaign's leads with something left to do: what starting it would mail, for the
// agent policy gate.
func (s *Store) PendingLeads(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (int, error) {
	n, err := queries.CampaignLeadsPendingCount(ctx, tx, dbq.CampaignLeadsPendingCountParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return 0, fmt.Errorf("campaign: pending leads: %w", err)
	}
	return int(n), nil
}

// Stop pauses an active campaign: nothing more is handed to the send pipeline and its queued tasks are
// cancelled (the leads send them again after a start).
func (s *Store) Stop(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Campaign, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if row.Status != StatusActive {
		return Campaign{}, apierror.BadRequest("campaign_not_active", fmt.Sprintf("Only an active campaign can be stopped; this one is %s.", row.Status))
	}
	now := s.now()
	params := updateParams(row, Campaign{Campaign: row}.Settings())
	params.Status, params.LastStatusChangeAt = StatusPaused, &now
	if _, err := queries.CampaignUpdate(ctx, tx, params); err != nil {
		return Campaign{}, classify(err)
	}
	if _, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: org, CampaignID: uuid.NullUUID{UUID: id, Valid: true},
		ErrorCode: "campaign_paused", Reason: "The campaign was paused before this message was sent."}); err != nil {
		return Campaign{}, err
	}
	out, err := s.Get(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: string(events.CampaignPaused),
		EntityType: audit.EntityCampaign, EntityID: id.String(), Metadata: map[string]any{"from": row.Status}}); err != nil {
		return Campaign{}, err
	}
	return out, s.moved(ctx, tx, out, row.Status, "stopped")
}

// ListFilter narrows GET /campaigns.
type ListFilter struct {
	Query  string
	Folder uuid.NullUUID
	Status string
	Kind   string
	After  uuid.NullUUID
	Limit  int32
}

func (f ListFilter) statuses() []string {
	switch f.Status {
	case "":
		return []string{}
	case StatusPaused:
		return []string{StatusPaused, StatusPausedNoAccounts, StatusPausedTrialExpired}
	}
	return []string{f.Status}
}

func optText(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// List reads one page of campaigns, newest first; rowLimit rows are read (the caller asks one more than the
// page to learn whether more follow).
func (s *Store) List(ctx context.Context, tx pgx.Tx, org uuid.UUID, f ListFilter, rowLimit int32) ([]Campaign, error) {
	rows, err := queries.CampaignList(ctx, tx, dbq.CampaignListParams{OrganizationID: org, After: f.After, Query: optText(contacts.LikeEscape(f.Query)),
		Folder: f.Folder, Statuses: f.statuses(), Kind: optText(f.Kind), RowLimit: rowLimit})
	if err != nil {
		return nil, err
	}
	return s.withLabels(ctx, tx, org, rows)
}

// Count is the number of campaigns matching f (its cursor aside).
func Count(ctx context.Context, tx pgx.Tx, org uuid.UUID, f ListFilter) (int64, error) {
	return queries.CampaignCount(ctx, tx, dbq.CampaignCountParams{OrganizationID: org, Query: optText(contacts.LikeEscape(f.Query)),
		Folder: f.Folder, Statuses: f.statuses(), Kind: optText(f.Kind)})
}

// Overview counts the organization's campaigns by status, kind and folder.
func Overview(ctx context.Context, tx pgx.Tx, org uuid.UUID) (dbq.CampaignOverviewRow, []dbq.CampaignFolderCountsRow, error) {
	o, err := queries.CampaignOverview(ctx, tx, org)
	if err != nil {
		return o, nil, err
	}
	folders, err := queries.CampaignFolderCounts(ctx, tx, org)
	return o, folders, err
}
