package engine

import (
	"cmp"
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/campaigns/abtest"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/schedule"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// pass is one planning pass over one campaign, inside its organization's transaction.
type pass struct {
	e     *Engine
	tx    pgx.Tx
	jobs  events.Inserter
	store *campaign.Store
	org   uuid.UUID
	row   dbq.Campaign
	c     campaign.Campaign
	set   campaign.Settings
	loc   *time.Location
	now   time.Time
}

func (e *Engine) newPass(ctx context.Context, tx pgx.Tx, jobs events.Inserter, row dbq.Campaign, now time.Time) (*pass, error) {
	labels, err := queries.CampaignLabelsOf(ctx, tx, dbq.CampaignLabelsOfParams{OrganizationID: row.OrganizationID,
		CampaignIds: []uuid.UUID{row.ID}})
	if err != nil {
		return nil, err
	}
	c := campaign.Campaign{Campaign: row, EmailTags: []uuid.UUID{}}
	for _, l := range labels {
		if l.Kind == "tag" {
			c.EmailTags = append(c.EmailTags, l.LabelID)
		}
	}
	loc, err := campaign.Location(row.Timezone)
	if err != nil {
		loc = time.UTC // stored zones were checked when written; one the zone database lost sends in UTC
	}
	return &pass{e: e, tx: tx, jobs: jobs, store: campaign.NewStore(events.NewOutbox(jobs), 0, func() time.Time { return now }),
		org: row.OrganizationID, row: row, c: c, set: c.Settings(), loc: loc, now: now}, nil
}

// civilDate is t's date in loc as midnight UTC (the date columns' form).
func civilDate(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// park keeps the campaign's leads due at now waiting until until with the reason (the campaign cannot send
// before then): one write to the campaign, which campaigns_due and the due leads' read honour (see
// EngineCampaignPark), rather than one per waiting lead. When the park in force ends then already, its leads
// keep its reason and only the leads due since it began are moved, with theirs.
func (p *pass) park(ctx context.Context, until time.Time, reason string) error {
	if after := p.after(); !after.IsZero() && p.row.ParkedUntil.Sub(until).Abs() < time.Microsecond { // as stored
		_, err := queries.EngineLeadsPark(ctx, p.tx, dbq.EngineLeadsParkParams{OrganizationID: p.org, CampaignID: p.row.ID,
			Now: p.now, After: after, Until: until, WaitReason: reason})
		return err
	}
	return queries.EngineCampaignPark(ctx, p.tx, dbq.EngineCampaignParkParams{OrganizationID: p.org, ID: p.row.ID,
		Now: p.now, Until: until, Reason: reason})
}

// after is the due time a lead must be past to be looked at: the end of the campaign's park while it is in
// force (leads due before it wait for the park), else the zero time.
func (p *pass) after() time.Time {
	if p.row.ParkedBefore != nil && p.row.ParkedUntil != nil && p.row.ParkedUntil.After(p.now) {
		return *p.row.ParkedBefore
	}
	return time.Time{}
}

// run plans the campaign's due leads: the campaign-wide gates first (end and start dates, the window, the day's
// limit and ramp), then each lead in the campaign's order.
func (p *pass) run(ctx context.Context) (Result, error) {
	if p.row.EndDate != nil && !p.row.EndDate.After(p.now) {
		_, err := p.store.Move(ctx, p.tx, p.row, campaign.StatusCompleted, "its end date passed")
		return Result{}, err
	}
	if p.row.StartDate != nil && p.row.StartDate.After(p.now) {
		return Result{}, p.park(ctx, *p.row.StartDate, ReasonNotStarted)
	}
	week := WeekOf(p.set)
	start, _, ok := week.Next(p.now, p.loc)
	if !ok {
		return Result{}, p.park(ctx, p.now.Add(24*time.Hour), ReasonOutsideWindow)
	}
	if start.After(p.now) {
		return Result{}, p.park(ctx, start, ReasonOutsideWindow)
	}
	day := civilDate(p.now, p.loc)
	counters, err := queries.EngineCampaignDay(ctx, p.tx, dbq.EngineCampaignDayParams{OrganizationID: p.org, CampaignID: p.row.ID, Day: day})
	if err != nil {
		return Result{}, err
	}
	level := RampLevelOn(p.row.RampLevel, p.row.RampDay, day)
	allowance, byRamp := Allowance(p.set, level)
	limitReason := ReasonCampaignLimit
	if byRamp {
		limitReason = ReasonRamp
	}
	tomorrow := p.nextDayStart(week)
	if counters.Sent >= allowance {
		return Result{}, p.park(ctx, tomorrow, limitReason)
	}
	// Leads lined up for a busy sender's slot today already have today's remaining sends (and new-lead quota)
	// they take: a pass reads no more leads than could still be sent today.
	lined, err := queries.EngineLeadsLined(ctx, p.tx, dbq.EngineLeadsLinedParams{OrganizationID: p.org, CampaignID: p.row.ID,
		Now: p.now, Until: tomorrow, WaitReason: ReasonGap})
	if err != nil {
		return Result{}, err
	}
	sendsLeft := allowance - counters.Sent
	if lined.Leads >= sendsLeft {
		return Result{}, p.park(ctx, tomorrow, limitReason)
	}
	limit := min(int(sendsLeft-lined.Leads), p.e.batch)
	leads, err := queries.EngineDueLeads(ctx, p.tx, dbq.EngineDueLeadsParams{OrganizationID: p.org, CampaignID: p.row.ID,
		Now: p.now, After: p.after(), PrioritizeNew: p.row.PrioritizeNewLeads, Descending: p.row.ContactOrderDir == "desc",
		OrderBy: p.row.ContactOrderBy, OrderField: deref(p.row.ContactOrderField), RowLimit: int32(limit)})
	if err != nil || len(leads) == 0 {
		return Result{}, err
	}
	pl, err := p.planner(ctx)
	if err != nil {
		return Result{}, err
	}
	if len(pl.senders) == 0 && p.row.SenderStrategy == campaign.StrategyExplicit {
		return Result{}, p.pause(ctx, campaign.StatusPausedNoAccounts, "its explicit sender pool has no enabled, active mailbox left")
	}
	pl.sendsLeft = sendsLeft
	pl.limitReason, pl.tomorrow = limitReason, tomorrow
	if p.row.MaxNewLeadsPerDay > 0 {
		pl.newLeft = p.row.MaxNewLeadsPerDay - counters.NewLeads
	} else {
		pl.newLeft = -1
	}
	pl.linedSends, pl.linedNew = lined.Leads, lined.NewLeads
	if err := pl.blocked(ctx, leads); err != nil {
		return Result{}, err
	}
	for i := range leads {
		if err := pl.decide(ctx, &leads[i]); err != nil {
			return Result{}, err
		}
		if !pl.fullUntil.IsZero() {
			leads = leads[:i+1] // the others are left as they are: the campaign waits for a sender's new day
			break
		}
	}
	sends, err := pl.enqueue(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := pl.save(ctx, day, level); err != nil {
		return Result{}, err
	}
	res := Result{Leads: len(leads), Sends: sends, Lateness: pl.lateness()}
	switch {
	case !pl.fullUntil.IsZero():
		return res, p.park(ctx, pl.fullUntil, ReasonMailboxCap)
	case len(leads) < limit:
		return res, nil
	case pl.linedSends >= pl.sendsLeft:
		// More leads are due and today's sends are all taken (sent, or lined up for a sender's slot): the others
		// wait for tomorrow as well.
		return res, p.park(ctx, tomorrow, limitReason)
	case pl.newLeft >= 0 && pl.newPlanned+pl.linedNew >= pl.newLeft:
		// Today's new leads are all taken: the other new ones wait for tomorrow. With no follow-up due (they
		// still go out today; those a park in force covers too, as a new park would take them over) that is the
		// whole campaign's wait, one write; otherwise the new ones are moved.
		followUps, err := queries.EngineFollowUpsDue(ctx, p.tx, dbq.EngineFollowUpsDueParams{OrganizationID: p.org,
			CampaignID: p.row.ID, Now: p.now})
		if err != nil || !followUps {
			return res, cmp.Or(err, p.park(ctx, tomorrow, ReasonNewLeadQuota))
		}
		parked, err := queries.EngineLeadsParkNew(ctx, p.tx, dbq.EngineLeadsParkNewParams{OrganizationID: p.org,
			CampaignID: p.row.ID, Now: p.now, Until: tomorrow, WaitReason: ReasonNewLeadQuota})
		res.Leads += int(parked)
		return res, err
	}
	return res, nil
}

// nextDayStart is when the campaign's next local day's sending starts: the first window at or after the
// coming midnight in its zone.
func (p *pass) nextDayStart(week schedule.Week) time.Time {
	y, m, d := p.now.In(p.loc).Date()
	midnight := time.Date(y, m, d+1, 0, 0, 0, 0, p.loc)
	if start, _, ok := week.Next(midnight, p.loc); ok {
		return start
	}
	return midnight
}

// lateness is how long after its due time each send of the pass was planned.
func (pl *planner) lateness() []time.Duration {
	var out []time.Duration
	for _, d := range pl.decisions {
		if d.send == nil || d.lead.DueAt == nil {
			continue
		}
		due := *d.lead.DueAt
		if until, ok := campaign.ParkCovers(pl.row.ParkedBefore, pl.row.ParkedUntil, due); ok {
			due = until // it waited for the campaign's park
		}
		out = append(out, pl.now.Sub(due))
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// planner holds one pass's state while it decides lead by lead: the pool with what each mailbox has left, the
// sequence, the variants and the decisions so far.
type planner struct {
	*pass
	steps     []campaign.Step
	variants  map[uuid.UUID][]dbq.CampaignVariant // by step; uuid.Nil holds the campaign-wide ones
	firstStep uuid.UUID                           // the first email step (campaign-wide variants apply there)
	senders   []Sender
	mailboxes []dbq.Mailbox // in the order of senders, with only the columns EnginePool reads (see loadPool)
	plans     map[uuid.UUID]dbq.MailboxPlan
	cursor    uint64
	files     map[uuid.UUID][]uuid.UUID // attachment ids by step
	overrides campaign.Overrides
	suppress  map[string]dbq.Suppression

	sendsLeft, newLeft int32
	newPlanned         int32
	limitReason        string
	tomorrow           time.Time

	// line is the pool as leads waiting for a busy sender see it: lined counts, per sender, the leads this pass
	// lined up for its coming slots, and linedSends and linedNew every lead lined up for today (earlier passes'
	// too) and the new ones among them (see lineUp).
	line                 []Sender
	lined                []int32
	linedSends, linedNew int32
	// fullUntil, once set, is when the first sender of a pool whose every sender has today's cap taken starts a
	// new day: the pass stops there and the campaign waits for it (see poolFullUntil).
	fullUntil time.Time
	// noneFree and noneRetry, once set, are why a choice open to the whole pool found no sender free and when
	// to look again (see chooseSender).
	noneFree  string
	noneRetry time.Time

	decisions []decision
	toVerify  []uuid.UUID
	ended     bool // a lead reached an end (the campaign may have completed)
}

// decision is what a pass decided for one lead; send is set when a message is enqueued for it.
type decision struct {
	lead       *dbq.EngineDueLeadsRow
	state      string
	pos        int32
	due        *time.Time
	reason     string
	mailbox    uuid.NullUUID
	variant    uuid.NullUUID
	last       *time.Time
	attempts   int16
	failure    string
	holdLifted bool
	send       *sending.Message
	sender     int // index into planner.senders when send is set
	isNew      bool
	task       uuid.UUID
	ref        string
}

// planner loads what deciding needs: steps, variants, the pool with each mailbox's day and plan, attachments
// and the advanced blocks.
func (p *pass) planner(ctx context.Context) (*planner, error) {
	pl := &planner{pass: p, variants: map[uuid.UUID][]dbq.CampaignVariant{}, files: map[uuid.UUID][]uuid.UUID{},
		cursor: uint64(max(p.row.RotationCursor, 0))}
	var err error
	if pl.steps, err = campaign.Steps(ctx, p.tx, p.org, p.row.ID); err != nil {
		return nil, err
	}
	for _, s := range pl.steps {
		if s.Kind == campaign.StepEmail {
			pl.firstStep = s.ID
			break
		}
	}
	if pl.overrides, err = campaign.Advanced(p.c); err != nil {
		return nil, err
	}
	if err := pl.loadVariants(ctx); err != nil {
		return nil, err
	}
	return pl, pl.loadPool(ctx)
}

// abJudgeEvery is how often the engine judges a campaign's A/B variants for a promotion: the analysis reads
// every send of the campaign, and a winner does not change by the second.
const abJudgeEvery = 10 * time.Minute

// loadVariants reads the active variants by step, first promoting the winners the ab_testing block asks for
// (abtest.Promote) when the variants were last judged abJudgeEvery ago or never.
func (pl *planner) loadVariants(ctx context.Context) error {
	vs, err := queries.EngineVariants(ctx, pl.tx, dbq.EngineVariantsParams{OrganizationID: pl.org, CampaignID: pl.row.ID})
	if err != nil {
		return err
	}
	ab := pl.overrides.ABTesting
	judge := len(vs) > 0 && ab.Enabled && ab.AutoPromoteWinner &&
		(pl.row.AbJudgedAt == nil || !pl.now.Before(pl.row.AbJudgedAt.Add(abJudgeEvery)))
	if judge {
		promoted, err := abtest.Promote(ctx, pl.tx, pl.org, pl.row.ID, pl.now)
		if err != nil {
			return err
		}
		if err := queries.EngineABJudged(ctx, pl.tx, dbq.EngineABJudgedParams{OrganizationID: pl.org, ID: pl.row.ID, At: pl.now}); err != nil {
			return err
		}
		if len(promoted) > 0 {
			if vs, err = queries.EngineVariants(ctx, pl.tx, dbq.EngineVariantsParams{OrganizationID: pl.org, CampaignID: pl.row.ID}); err != nil {
				return err
			}
		}
	}
	for _, v := range vs {
		pl.variants[v.StepID.UUID] = append(pl.variants[v.StepID.UUID], v)
	}
	return nil
}

// loadPool reads the sender pool and locks its plans (in mailbox order), and works out what each mailbox has
// left today and when its next send may start.
func (pl *planner) loadPool(ctx context.Context) error {
	senders, err := campaign.Senders(ctx, pl.tx, pl.org, pl.row.ID)
	if err != nil {
		return err
	}
	every := pl.row.SenderStrategy == campaign.StrategyTags && len(senders) == 0 && len(pl.c.EmailTags) == 0
	rows, err := queries.EnginePool(ctx, pl.tx, dbq.EnginePoolParams{OrganizationID: pl.org, CampaignID: pl.row.ID,
		TagIds: pl.c.EmailTags, EveryMailbox: every})
	if err != nil || len(rows) == 0 {
		return err
	}
	ids := make([]uuid.UUID, len(rows))
	days := make([]time.Time, len(rows))
	for i, r := range rows {
		ids[i], days[i] = r.ID, sending.MailboxDay(pl.now, r.Timezone)
	}
	plans, err := queries.EnginePlansLock(ctx, pl.tx, dbq.EnginePlansLockParams{OrganizationID: pl.org, MailboxIds: ids})
	if err == nil && len(plans) < len(ids) { // a mailbox new to planning: its plan row first
		if err = queries.EnginePlansEnsure(ctx, pl.tx, dbq.EnginePlansEnsureParams{OrganizationID: pl.org, MailboxIds: ids}); err == nil {
			plans, err = queries.EnginePlansLock(ctx, pl.tx, dbq.EnginePlansLockParams{OrganizationID: pl.org, MailboxIds: ids})
		}
	}
	if err != nil {
		return err
	}
	pl.plans = make(map[uuid.UUID]dbq.MailboxPlan, len(plans))
	for _, pn := range plans {
		pl.plans[pn.MailboxID] = pn
	}
	counted, err := queries.CampaignEstimateSentToday(ctx, pl.tx, dbq.CampaignEstimateSentTodayParams{OrganizationID: pl.org,
		MailboxIds: ids, Days: days})
	if err != nil {
		return err
	}
	used := make(map[uuid.UUID]int32, len(counted))
	for _, c := range counted {
		used[c.MailboxID] = c.Capped
	}
	for i, r := range rows {
		// The pool row as the mailbox the message is composed and enqueued from: the columns EnginePool reads.
		m := dbq.Mailbox{OrganizationID: r.OrganizationID, ID: r.ID, Email: r.Email, SendAsEmail: r.SendAsEmail,
			Name: r.Name, SignatureHtml: r.SignatureHtml, SignaturePlain: r.SignaturePlain, Provider: r.Provider,
			Timezone: r.Timezone, CampaignLimit: r.CampaignLimit, MinWaitTime: r.MinWaitTime,
			LastCappedSendAt: r.LastCappedSendAt, AuthFailingSince: r.AuthFailingSince,
			TrackingDomain: r.TrackingDomain, TrackingDomainVerified: r.TrackingDomainVerified}
		gap := time.Duration(m.MinWaitTime) * time.Second
		s := Sender{ID: m.ID, Weight: r.Weight, ESP: MailboxESP(m.Provider), Cap: m.CampaignLimit, Used: used[m.ID],
			Gap: gap, Slot: sending.NextSlot(m, pl.now), Disabled: mailbox.AuthBlocked(m, pl.e.authGrace, pl.now)}
		if pn, ok := pl.plans[m.ID]; ok && pn.Day.Equal(days[i]) {
			s.Used = max(s.Used, pn.Planned)
			if pn.PlannedUntil != nil && pn.PlannedUntil.Add(gap).After(s.Slot) {
				s.Slot = pn.PlannedUntil.Add(gap)
			}
		}
		loc := sending.Zone(m.Timezone)
		y, mo, d := pl.now.In(loc).Date()
		s.DayEnds = time.Date(y, mo, d+1, 0, 0, 0, 0, loc)
		pl.senders = append(pl.senders, s)
		pl.mailboxes = append(pl.mailboxes, m)
	}
	return nil
}

// blocked reads which of the leads' addresses are suppressed.
func (pl *planner) blocked(ctx context.Context, leads []dbq.EngineDueLeadsRow) error {
	addrs := make([]string, len(leads))
	for i, l := range leads {
		addrs[i] = l.Email
	}
	var err error
	pl.suppress, err = suppression.Blocked(ctx, pl.tx, pl.org, addrs)
	return err
}

// contactOf is the recipient a lead's messages are composed for.
func contactOf(l *dbq.EngineDueLeadsRow) (compose.Contact, error) {
	return compose.ContactOf(dbq.ComposeContactRow{ID: l.ContactID, Email: l.Email, FirstName: l.FirstName,
		LastName: l.LastName, Company: l.Company, Phone: l.Phone, CustomFields: l.CustomFields})
}
