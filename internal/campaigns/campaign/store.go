package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// DefaultDailyCreations is how many campaigns an organization may create (or duplicate) per UTC day unless
// the operator configures another number.
const DefaultDailyCreations = 100

var queries = dbq.New()

// Store runs the campaign operations inside the caller's organization-scoped transaction.
type Store struct {
	outbox *events.Outbox
	// dailyCreations is the new-campaign throttle per organization and UTC day.
	dailyCreations int32
	now            func() time.Time
}

// NewStore builds the campaign operations: events go through outbox, and at most dailyCreations campaigns
// may be created per organization and UTC day (0 = DefaultDailyCreations). now is the clock (nil = time.Now).
func NewStore(outbox *events.Outbox, dailyCreations int, now func() time.Time) *Store {
	if dailyCreations <= 0 {
		dailyCreations = DefaultDailyCreations
	}
	if now == nil {
		now = time.Now
	}
	return &Store{outbox: outbox, dailyCreations: int32(min(dailyCreations, 1<<30)), now: now}
}

// Campaign is a stored campaign with its tags and folders.
type Campaign struct {
	dbq.Campaign
	EmailTags, Folders []uuid.UUID
	// SegmentIDs are the linked segments whose members become leads (segments.go).
	SegmentIDs []uuid.UUID
}

// Windows are the campaign's schedule windows (nil when the legacy days and times apply).
func (c Campaign) Windows() [][]Window { return parseWindows(c.ScheduleWindows) }

// Settings are c's editable fields.
func (c Campaign) Settings() Settings {
	return Settings{
		Name: c.Name, Description: c.Description, Kind: c.Kind, StopOnReply: c.StopOnReply,
		OpenTracking: c.OpenTracking, LinkTracking: c.LinkTracking, TextOnly: c.TextOnly,
		UnsubscribeHeader: c.UnsubscribeHeader, RiskyEmails: c.RiskyEmails, DailyLimit: c.DailyLimit, Cc: c.Cc,
		Bcc: c.Bcc, StartDate: c.StartDate, EndDate: c.EndDate, Timezone: c.Timezone, Days: c.Days,
		StartTime: c.StartTime, EndTime: c.EndTime, ScheduleWindows: c.Windows(), ContactOrderBy: c.ContactOrderBy,
		ContactOrderDir: c.ContactOrderDir, ContactOrderField: c.ContactOrderField, SenderStrategy: c.SenderStrategy,
		RotationMode: c.RotationMode, RampEnabled: c.RampEnabled, RampStart: c.RampStart,
		RampIncrement: c.RampIncrement, RampCeiling: c.RampCeiling, EspMatchMode: c.EspMatchMode,
		MaxNewLeadsPerDay: c.MaxNewLeadsPerDay, PrioritizeNewLeads: c.PrioritizeNewLeads,
		EntryDelayMinutes: c.EntryDelayMinutes, Continuous: c.Continuous, TrackingDomain: c.TrackingDomain,
		UtmTracking: c.UtmTracking, UtmSource: c.UtmSource, UtmMedium: c.UtmMedium, UtmCampaign: c.UtmCampaign,
	}
}

// NotFound is the answer for an unknown campaign id (a foreign one included).
func NotFound() error { return apierror.NotFound("campaign_not_found", "Campaign not found.") }

func classify(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return NotFound()
	}
	return db.Classify(err, "Campaign")
}

// SenderInput is one mailbox of an explicit sender pool.
type SenderInput struct {
	MailboxID uuid.UUID
	Weight    Field[int32]
	Enabled   Field[bool]
}

// CreateInput is what POST /campaigns sends beyond the settings.
type CreateInput struct {
	Patch                  Patch
	UserID                 uuid.NullUUID
	EmailTagIDs, FolderIDs []uuid.UUID
	Senders                []SenderInput
	Steps                  []StepInput
	// SegmentIDs link segments whose members become leads, now and as they join.
	SegmentIDs []uuid.UUID
	// Then runs in the same transaction once the campaign and its steps exist (variants and advanced blocks
	// of the same request are written there).
	Then func(ctx context.Context, tx pgx.Tx, c Campaign, steps []Step) error
}

// Get reads one campaign of org.
func (s *Store) Get(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Campaign, error) {
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return Campaign{}, classify(err)
	}
	out, err := s.withLabels(ctx, tx, org, []dbq.Campaign{row})
	if err != nil {
		return Campaign{}, err
	}
	return out[0], nil
}

// lock reads one campaign of org for update.
func lock(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (dbq.Campaign, error) {
	row, err := queries.CampaignGetForUpdate(ctx, tx, dbq.CampaignGetForUpdateParams{OrganizationID: org, ID: id})
	return row, classify(err)
}

// withLabels attaches each campaign's tags, folders and linked segments.
func (s *Store) withLabels(ctx context.Context, tx pgx.Tx, org uuid.UUID, rows []dbq.Campaign) ([]Campaign, error) {
	ids := make([]uuid.UUID, len(rows))
	out := make([]Campaign, len(rows))
	at := make(map[uuid.UUID]int, len(rows))
	for i, r := range rows {
		ids[i], at[r.ID] = r.ID, i
		out[i] = Campaign{Campaign: r, EmailTags: []uuid.UUID{}, Folders: []uuid.UUID{}, SegmentIDs: []uuid.UUID{}}
	}
	if len(rows) == 0 {
		return out, nil
	}
	labels, err := queries.CampaignLabelsOf(ctx, tx, dbq.CampaignLabelsOfParams{OrganizationID: org, CampaignIds: ids})
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		c := &out[at[l.CampaignID]]
		if l.Kind == "folder" {
			c.Folders = append(c.Folders, l.LabelID)
		} else if l.Kind == "tag" {
			c.EmailTags = append(c.EmailTags, l.LabelID)
		}
	}
	links, err := segmentsOf(ctx, tx, org, ids)
	if err != nil {
		return nil, err
	}
	for id, segments := range links {
		out[at[id]].SegmentIDs = segments
	}
	return out, nil
}

// setLabels replaces a campaign's labels of kind with ids, each of which must be a label of that kind in org.
func setLabels(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, kind, field string, ids []uuid.UUID) error {
	ids = dedupe(ids)
	if len(ids) > 50 {
		return invalid(field, "takes at most 50 ids.")
	}
	found, err := queries.LabelsExisting(ctx, tx, dbq.LabelsExistingParams{OrganizationID: org, Kind: kind, LabelIds: ids})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return apierror.BadRequest("invalid_"+field, fmt.Sprintf("%s: %s is not a %s of this organization.", field, id, labelWord(kind)))
		}
	}
	if err := queries.CampaignLabelsClear(ctx, tx, dbq.CampaignLabelsClearParams{OrganizationID: org, CampaignID: campaign, Kind: kind}); err != nil {
		return err
	}
	return queries.CampaignLabelsAdd(ctx, tx, dbq.CampaignLabelsAddParams{OrganizationID: org, CampaignID: campaign, LabelIds: ids})
}

func labelWord(kind string) string {
	if kind == "tag" {
		return "mailbox tag"
	}
	return "campaign folder"
}

func dedupe(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// poolCap is the highest daily cap of the mailboxes the campaign would send from.
func poolCap(ctx context.Context, tx pgx.Tx, org uuid.UUID, strategy string, senders, tags []uuid.UUID) (int32, error) {
	return queries.CampaignPoolCap(ctx, tx, dbq.CampaignPoolCapParams{OrganizationID: org, MailboxIds: nonNilIDs(senders),
		TagIds: nonNilIDs(tags), Fallback: strategy == StrategyTags && len(senders) == 0 && len(tags) == 0})
}

func nonNilIDs(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// throttle counts a new campaign toward the organization's day and refuses past the daily limit.
func (s *Store) throttle(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	n, err := queries.CampaignCreationTake(ctx, tx, org)
	if err != nil {
		return err
	}
	if n > s.dailyCreations {
		now := s.now().UTC()
		tomorrow := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		return apierror.TooManyRequests("campaign_daily_limit",
			fmt.Sprintf("This organization may create %d campaigns per day; try again after 00:00 UTC.", s.dailyCreations),
			int(tomorrow.Sub(now).Seconds())+1)
	}
	return nil
}

// insert writes a campaign row from validated settings.
func insert(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, user uuid.NullUUID, st Settings, advanced []byte, advancedAt *time.Time) (dbq.Campaign, error) {
	if advanced == nil {
		advanced = []byte("{}")
	}
	row, err := queries.CampaignInsert(ctx, tx, dbq.CampaignInsertParams{
		OrganizationID: org, ID: id, UserID: user, Name: st.Name, Description: st.Description, Kind: st.Kind,
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
		Continuous: st.Continuous, TrackingDomain: st.TrackingDomain, UtmTracking: st.UtmTracking,
		UtmSource: st.UtmSource, UtmMedium: st.UtmMedium, UtmCampaign: st.UtmCampaign, Advanced: advanced,
		AdvancedUpdatedAt: advancedAt,
	})
	return row, db.Classify(err, "Campaign")
}

// insertSteps writes a sequence (its app actions' connections checked and kept, see keepConnections).
func insertSteps(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, steps []Step) error {
	if err := keepConnections(ctx, tx, org, steps); err != nil {
		return err
	}
	for _, st := range steps {
		if err := queries.CampaignStepInsert(ctx, tx, dbq.CampaignStepInsertParams{
			OrganizationID: org, CampaignID: campaign, ID: st.ID, Position: st.Position, Name: st.Name, Kind: st.Kind,
			Subject: st.Subject, BodyPlain: st.BodyPlain, BodyHtml: st.BodyHTML, BodySync: st.BodySync,
			BodyCode: st.BodyCode, WaitAfter: st.WaitAfter, ThreadReply: st.ThreadReply, Conditions: st.Conditions,
			Action: st.Action, OnTimeout: st.OnTimeout,
		}); err != nil {
			return db.Classify(err, "Step")
		}
	}
	return nil
}

// ReplaceSenders sets a campaign's explicit sender pool; every mailbox must belong to org. A mailbox that stays
// in the pool keeps its last_sent_at (the least_used rotation reads it).
func ReplaceSenders(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, senders []SenderInput) error {
	if len(senders) > 500 {
		return invalid("senders", "takes at most 500 mailboxes.")
	}
	ids := make([]uuid.UUID, 0, len(senders))
	for _, s := range senders {
		if slices.Contains(ids, s.MailboxID) {
			return invalid("senders", fmt.Sprintf("lists mailbox %s twice.", s.MailboxID))
		}
		if s.Weight.Set && (s.Weight.Value < 1 || s.Weight.Value > 100) {
			return invalid("senders", "weight must be 1 to 100.")
		}
		ids = append(ids, s.MailboxID)
	}
	found, err := queries.MailboxesExisting(ctx, tx, dbq.MailboxesExistingParams{OrganizationID: org, MailboxIds: ids})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return apierror.BadRequest("invalid_senders", fmt.Sprintf("senders: %s is not a mailbox of this organization.", id))
		}
	}
	if err := queries.CampaignSendersRetain(ctx, tx, dbq.CampaignSendersRetainParams{OrganizationID: org, CampaignID: campaign, KeepIds: ids}); err != nil {
		return err
	}
	at := time.Now()
	for i, s := range senders {
		weight, enabled := int32(1), true
		s.Weight.apply(&weight)
		s.Enabled.apply(&enabled)
		if err := queries.CampaignSenderInsert(ctx, tx, dbq.CampaignSenderInsertParams{OrganizationID: org, CampaignID: campaign,
			MailboxID: s.MailboxID, Weight: weight, Enabled: enabled, CreatedAt: at.Add(time.Duration(i) * time.Microsecond)}); err != nil {
			return err
		}
	}
	return nil
}

// Create writes a new draft campaign with its labels, senders and steps, counts it toward the daily
// throttle, raises campaign.created and records the audit entry.
func (s *Store) Create(ctx context.Context, tx pgx.Tx, org uuid.UUID, in CreateInput) (Campaign, error) {
	senderIDs := make([]uuid.UUID, len(in.Senders))
	for i, x := range in.Senders {
		senderIDs[i] = x.MailboxID
	}
	st := in.Patch.Apply(Defaults())
	capacity, err := poolCap(ctx, tx, org, st.SenderStrategy, senderIDs, in.EmailTagIDs)
	if err != nil {
		return Campaign{}, err
	}
	if st, err = Normalize(st, Check{Now: s.now(), MailboxCap: capacity}); err != nil {
		return Campaign{}, err
	}
	steps, err := BuildSteps(in.Steps, st.Kind)
	if err != nil {
		return Campaign{}, err
	}
	if err := s.throttle(ctx, tx, org); err != nil {
		return Campaign{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Campaign{}, err
	}
	row, err := insert(ctx, tx, org, id, in.UserID, st, nil, nil)
	if err != nil {
		return Campaign{}, err
	}
	if err := setLabels(ctx, tx, org, id, "tag", "email_tag_ids", in.EmailTagIDs); err != nil {
		return Campaign{}, err
	}
	if err := setLabels(ctx, tx, org, id, "folder", "folder_ids", in.FolderIDs); err != nil {
		return Campaign{}, err
	}
	if err := ReplaceSenders(ctx, tx, org, id, in.Senders); err != nil {
		return Campaign{}, err
	}
	if err := insertSteps(ctx, tx, org, id, steps); err != nil {
		return Campaign{}, err
	}
	if err := setSegments(ctx, tx, org, id, in.SegmentIDs); err != nil {
		return Campaign{}, err
	}
	c, err := s.withLabels(ctx, tx, org, []dbq.Campaign{row})
	if err != nil {
		return Campaign{}, err
	}
	if in.Then != nil {
		if err := in.Then(ctx, tx, c[0], steps); err != nil {
			return Campaign{}, err
		}
		if c[0], err = s.Get(ctx, tx, org, id); err != nil {
			return Campaign{}, err
		}
	}
	return c[0], s.raise(ctx, tx, c[0], events.CampaignCreated, audit.ActionCreate, map[string]any{"steps": len(steps)})
}

// raise emits a campaign event with the campaign's summary and records the matching audit entry.
func (s *Store) raise(ctx context.Context, tx pgx.Tx, c Campaign, t events.Type, action string, meta map[string]any) error {
	data := map[string]any{"campaign_id": c.ID, "name": c.Name, "status": c.Status, "kind": c.Kind}
	for k, v := range meta {
		data[k] = v
	}
	if _, err := s.outbox.Emit(ctx, tx, t, data); err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: action, Event: string(t), EntityType: audit.EntityCampaign,
		EntityID: c.ID.String(), Metadata: data})
}

// Log writes one entry of the campaign activity log.
func Log(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, contact uuid.NullUUID, eventType, message string, meta []byte) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if meta == nil {
		meta = []byte("{}")
	}
	return queries.CampaignLogInsert(ctx, tx, dbq.CampaignLogInsertParams{OrganizationID: org, CampaignID: campaign, ID: id,
		ContactID: contact, EventType: eventType, Message: message, Metadata: meta})
}
