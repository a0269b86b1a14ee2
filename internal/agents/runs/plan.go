package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/schedule"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// Plan is what a run would do, as a draft answers it, an approval shows it to a person and a launch checks
// it: who gets mail once suppressions and verification verdicts are applied, from which mailboxes, how much
// they can send a day and when the first sends would leave, and what preflight found.
type Plan struct {
	CampaignName string `json:"campaign_name"`
	// Recipients are the leads that would be mailed; Audience says how they were counted.
	Recipients int          `json:"recipients"`
	Audience   PlanAudience `json:"audience"`
	// EmailSteps is how many emails each recipient may get; Actions is Recipients x EmailSteps, the most
	// messages the run sends.
	EmailSteps int `json:"email_steps"`
	Actions    int `json:"actions"`
	// Mailboxes are the frozen senders that can send now.
	Mailboxes      []PlanMailbox `json:"mailboxes"`
	DailyLimit     int           `json:"daily_limit"`
	DailyCapacity  int           `json:"daily_capacity"`
	RemainingToday int           `json:"remaining_today"`
	Timezone       string        `json:"timezone"`
	// FirstSendAt is when the first sends would leave (null when nothing can be sent).
	FirstSendAt       *time.Time `json:"first_send_at"`
	SendingDays       *int       `json:"sending_days"`
	EstimatedFinishAt *time.Time `json:"estimated_finish_at"`
	Preflight         Preflight  `json:"preflight"`
}

// PlanAudience counts the run's leads: every open lead of the campaign, and those who will get nothing and
// why (the engine's reasons, in its order). Unverified leads are counted as recipients; the engine checks
// them before their first send.
type PlanAudience struct {
	Leads        int `json:"leads"`
	Suppressed   int `json:"suppressed"`
	Unsubscribed int `json:"unsubscribed"`
	Invalid      int `json:"invalid"`
	Risky        int `json:"risky"`
	Unverified   int `json:"unverified"`
}

// PlanMailbox is one sender of the plan: its cap and what is left of it today.
type PlanMailbox struct {
	ID             uuid.UUID `json:"id"`
	Email          string    `json:"email"`
	DailyCap       int       `json:"daily_cap"`
	RemainingToday int       `json:"remaining_today"`
}

// Preflight is the campaign preflight (checks.Evaluate) over the campaign the run would send.
type Preflight struct {
	Passed          bool          `json:"passed"`
	Score           int           `json:"score"`
	Problems        []PlanProblem `json:"problems"`
	Recommendations []string      `json:"recommendations"`
}

// PlanProblem is one check preflight did not pass.
type PlanProblem struct {
	Check       string `json:"check"`
	Severity    string `json:"severity"`
	Message     string `json:"message"`
	Remediation string `json:"remediation,omitempty"`
}

// blocking are the problems that stop a launch (severity error).
func (p Preflight) blocking() []PlanProblem {
	var out []PlanProblem
	for _, x := range p.Problems {
		if x.Severity == string(checks.SeverityError) {
			out = append(out, x)
		}
	}
	return out
}

// prepared is the campaign a run built (in a savepoint: kept by a launch, rolled back by a draft) and the
// senders it froze.
type prepared struct {
	campaign campaign.Campaign
	frozen   []uuid.UUID
}

// build writes the campaign the run sends, in tx: a new one from the run's metadata, steps and variants, or
// the named one with the run's settings; its senders frozen to explicit mailboxes (see freeze); its leads
// enrolled (inline leads upserted as contacts, contact ids, segment members). p is the requester, whose
// mailbox scope limits the senders. A refusal is an API error for the run's error details.
func (r *Runner) build(ctx context.Context, tx pgx.Tx, run dbq.Run, in Input, p *auth.Principal) (prepared, error) {
	org := run.OrganizationID
	patch, err := settingsPatch(in)
	if err != nil {
		return prepared{}, err
	}
	var c campaign.Campaign
	var frozen []uuid.UUID
	if !in.CampaignID.Valid {
		steps, variants, err := campaignSteps(in.Steps, connectionResolver(ctx, tx, org))
		if err != nil {
			return prepared{}, err
		}
		if frozen, err = r.freeze(ctx, tx, org, in.Senders, p, nil); err != nil {
			return prepared{}, err
		}
		senders := make([]campaign.SenderInput, len(frozen))
		for i, id := range frozen {
			senders[i] = campaign.SenderInput{MailboxID: id}
		}
		c, err = r.store.Create(ctx, tx, org, campaign.CreateInput{Patch: patch, UserID: run.UserID, Senders: senders, Steps: steps,
			SegmentIDs: in.SegmentIDs, Then: func(ctx context.Context, tx pgx.Tx, c campaign.Campaign, built []campaign.Step) error {
				return campaign.AddVariants(ctx, tx, c, built, variants)
			}})
		if err != nil {
			return prepared{}, err
		}
	} else {
		cur, err := r.store.Get(ctx, tx, org, in.CampaignID.UUID)
		if err != nil {
			return prepared{}, err
		}
		if frozen, err = r.freeze(ctx, tx, org, in.Senders, p, &cur); err != nil {
			return prepared{}, err
		}
		up := campaign.UpdateInput{Patch: patch}
		if len(in.SegmentIDs) > 0 {
			up.Segments = campaign.Of(union(cur.SegmentIDs, in.SegmentIDs))
		}
		if _, err := r.store.Update(ctx, tx, org, cur.ID, up); err != nil {
			return prepared{}, err
		}
		senders := make([]campaign.SenderInput, len(frozen))
		for i, id := range frozen {
			senders[i] = campaign.SenderInput{MailboxID: id}
		}
		if _, err := r.store.SetSenders(ctx, tx, org, cur.ID, senders); err != nil {
			return prepared{}, err
		}
		if c, err = r.store.Get(ctx, tx, org, cur.ID); err != nil {
			return prepared{}, err
		}
	}
	if err := enroll(ctx, tx, org, c.ID, in, p); err != nil {
		return prepared{}, err
	}
	return prepared{campaign: c, frozen: frozen}, nil
}

// union is a then the ids of b it lacks.
func union(a, b []uuid.UUID) []uuid.UUID {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// freeze picks the mailboxes the run sends from, once, so the policy and the person approving see exactly
// the senders that will send: mode explicit the listed ones; mode tag the sendable mailboxes carrying the
// tags; mode auto every sendable mailbox (or, for an existing campaign, the sendable ones of its own pool).
// Sendable is active, in active rotation and not blocked for failing domain authentication; a mailbox-scoped
// requester's own mailboxes only.
func (r *Runner) freeze(ctx context.Context, tx pgx.Tx, org uuid.UUID, s Senders, p *auth.Principal, existing *campaign.Campaign) ([]uuid.UUID, error) {
	if s.Mode == SendersExplicit {
		for i, id := range s.MailboxIDs {
			if !p.MayUseMailbox(id) {
				return nil, bad(fmt.Sprintf("senders.mailbox_ids[%d]", i), fmt.Sprintf("names no mailbox of this organization (%s).", id))
			}
		}
		return s.MailboxIDs, nil
	}
	var tags []uuid.UUID
	if s.Mode == SendersTag {
		tags = s.TagIDs
	}
	rows, err := r.sendable(ctx, tx, org, tags, p.AllowedMailboxes)
	if err != nil {
		return nil, err
	}
	var pool []uuid.UUID
	if existing != nil && s.Mode == SendersAuto {
		snap, err := checks.Load(ctx, tx, org, existing.ID, r.now())
		if err != nil {
			return nil, err
		}
		for _, m := range snap.Pool {
			if m.Active && m.Enabled {
				pool = append(pool, m.ID)
			}
		}
	}
	out := []uuid.UUID{}
	for _, m := range rows {
		if existing == nil || s.Mode != SendersAuto || slices.Contains(pool, m.ID) {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// sendable are the organization's mailboxes a campaign could send from now (carrying any of tags when given,
// among only when given), without those whose domain fails authentication past the grace period.
func (r *Runner) sendable(ctx context.Context, tx pgx.Tx, org uuid.UUID, tags, only []uuid.UUID) ([]dbq.Mailbox, error) {
	rows, err := queries.CampaignEstimateMailboxes(ctx, tx, dbq.CampaignEstimateMailboxesParams{OrganizationID: org, Tags: tags, OnlyIds: only})
	if err != nil {
		return nil, err
	}
	now := r.now()
	return slices.DeleteFunc(rows, func(m dbq.Mailbox) bool { return mailbox.AuthBlocked(m, r.authGrace, now) }), nil
}

// enroll makes the run's leads leads of campaign: inline leads are upserted as contacts (a known address is
// enriched, as POST /contacts does), and they and the contact ids are added as pending leads. Segment
// members were enrolled with the segment links.
func enroll(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, in Input, p *auth.Principal) error {
	ids := slices.Clone(in.ContactIDs)
	var created []uuid.UUID
	source := "api"
	if p.IsSession() {
		source = "manual"
	}
	for _, l := range in.Leads {
		email, _ := contacts.NormalizeEmail(l.Email)
		custom := map[string]string{}
		for k, v := range l.CustomFields {
			if v != "" {
				custom[k] = v
			}
		}
		doc, err := json.Marshal(custom)
		if err != nil {
			return err
		}
		id, at, err := contacts.NewID()
		if err != nil {
			return err
		}
		row, err := queries.ContactUpsert(ctx, tx, dbq.ContactUpsertParams{OrganizationID: org, ID: id, Email: email,
			FirstName: strings.TrimSpace(l.FirstName), LastName: strings.TrimSpace(l.LastName), Company: strings.TrimSpace(l.Company),
			Phone: strings.TrimSpace(l.Phone), CustomFields: doc, Source: source, CreatedAt: at})
		if err != nil {
			return fmt.Errorf("runs: upsert lead: %w", err)
		}
		if row.Inserted {
			created = append(created, row.ID)
		}
		if !slices.Contains(ids, row.ID) {
			ids = append(ids, row.ID)
		}
	}
	if len(created) > 0 {
		var user uuid.NullUUID
		if p.UserID != uuid.Nil {
			user = uuid.NullUUID{UUID: p.UserID, Valid: true}
		}
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: created, UserID: user, Type: activity.ContactCreated,
			Metadata: map[string]any{"source": source}}); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := queries.ContactLinksCampaignsAdd(ctx, tx, dbq.ContactLinksCampaignsAddParams{OrganizationID: org, ContactIds: ids,
		CampaignIds: []uuid.UUID{campaignID}})
	return err
}

// plan reads what the prepared campaign would do now: its preflight, its audience after suppressions and
// verdicts, its frozen senders' capacity, and when its first sends would leave.
func (r *Runner) plan(ctx context.Context, tx pgx.Tx, prep prepared) (Plan, error) {
	c, org, now := prep.campaign, prep.campaign.OrganizationID, r.now()
	snap, err := checks.Load(ctx, tx, org, c.ID, now)
	if err != nil {
		return Plan{}, err
	}
	report := checks.Evaluate(snap)
	aud, err := queries.RunAudience(ctx, tx, dbq.RunAudienceParams{OrganizationID: org, CampaignID: c.ID, RiskyEmails: c.RiskyEmails})
	if err != nil {
		return Plan{}, err
	}
	emails := 0
	for _, s := range snap.Steps {
		if s.Kind == campaign.StepEmail {
			emails++
		}
	}
	out := Plan{CampaignName: c.Name, Recipients: int(aud.Recipients), EmailSteps: emails, Actions: int(aud.Recipients) * emails,
		Audience: PlanAudience{Leads: int(aud.Recipients + aud.Suppressed + aud.Unsubscribed + aud.Invalid + aud.Risky),
			Suppressed: int(aud.Suppressed), Unsubscribed: int(aud.Unsubscribed), Invalid: int(aud.Invalid), Risky: int(aud.Risky),
			Unverified: int(aud.Unverified)},
		Mailboxes: []PlanMailbox{}, DailyLimit: int(c.DailyLimit), Timezone: c.Timezone,
		Preflight: Preflight{Passed: report.Passed, Score: report.Score, Problems: []PlanProblem{}, Recommendations: report.Recommendations}}
	for _, x := range report.Checks {
		if !x.Passed {
			out.Preflight.Problems = append(out.Preflight.Problems, PlanProblem{Check: x.Key, Severity: string(x.Severity),
				Message: x.Message, Remediation: x.Remediation})
		}
	}
	days, err := r.capacity(ctx, tx, org, prep.frozen, now, &out)
	if err != nil {
		return Plan{}, err
	}
	loc, err := campaign.Location(c.Timezone)
	if err != nil {
		return Plan{}, err
	}
	in := schedule.EstimateInput{Recipients: out.Recipients, Mailboxes: days, DailyLimit: int(c.DailyLimit),
		Days: schedule.Weekdays(c.Days), Location: loc, Now: now}
	if c.StartDate != nil {
		in.Start = *c.StartDate
	}
	proj := schedule.Estimate(in)
	out.DailyCapacity, out.RemainingToday, out.SendingDays, out.EstimatedFinishAt = proj.DailyCapacity, proj.RemainingToday, proj.SendingDays, proj.EstimatedFinishAt
	out.FirstSendAt = firstSend(c.Settings(), in, proj, loc)
	return out, nil
}

// capacity fills the plan's mailboxes (the frozen senders that can send now, with their caps and what their
// own day has left) and answers them as the estimate's mailbox facts.
func (r *Runner) capacity(ctx context.Context, tx pgx.Tx, org uuid.UUID, frozen []uuid.UUID, now time.Time, out *Plan) ([]schedule.MailboxDay, error) {
	if len(frozen) == 0 {
		return nil, nil
	}
	rows, err := r.sendable(ctx, tx, org, nil, frozen)
	if err != nil {
		return nil, err
	}
	ids, days := make([]uuid.UUID, len(rows)), make([]time.Time, len(rows))
	for i, m := range rows {
		ids[i], days[i] = m.ID, sending.MailboxDay(now, m.Timezone)
	}
	sent, err := queries.CampaignEstimateSentToday(ctx, tx, dbq.CampaignEstimateSentTodayParams{OrganizationID: org, MailboxIds: ids, Days: days})
	if err != nil {
		return nil, err
	}
	facts := make([]schedule.MailboxDay, len(rows))
	for i, m := range rows {
		facts[i].Cap = int(m.CampaignLimit)
		for _, s := range sent {
			if s.MailboxID == m.ID {
				facts[i].SentToday = int(s.Capped)
			}
		}
		out.Mailboxes = append(out.Mailboxes, PlanMailbox{ID: m.ID, Email: m.Email, DailyCap: facts[i].Cap,
			RemainingToday: max(0, min(out.DailyLimit, facts[i].Cap)-facts[i].SentToday)})
	}
	return facts, nil
}

// firstSend is when the first sends would leave: the first moment of the campaign's sending windows at or
// after its start (now, or its start date), on a later day when nothing is left of today's capacity; nil when
// there is nobody to send to or no capacity at all.
func firstSend(s campaign.Settings, in schedule.EstimateInput, p schedule.Projection, loc *time.Location) *time.Time {
	if p.Recipients == 0 || p.DailyCapacity == 0 {
		return nil
	}
	from := in.Now
	if in.Start.After(from) {
		from = in.Start
	}
	if p.RemainingToday == 0 && !in.Start.After(in.Now) {
		y, m, d := from.In(loc).Date()
		from = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	}
	at, _, ok := engine.WeekOf(s).Next(from, loc)
	if !ok {
		return nil
	}
	at = at.UTC().Truncate(time.Second)
	return &at
}
